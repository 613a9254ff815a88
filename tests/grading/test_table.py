"""docs/grading.md is generated from the specs and must match them: one row per catalogue competition."""

from __future__ import annotations

import io
from pathlib import Path

from django.conf import settings
from django.core.management import call_command

from leaderboard.grading.specs import SPECS
from leaderboard.grading.table import row

DOC = Path(__file__).resolve().parents[2] / "docs" / "grading.md"


def _generated() -> str:
    out = io.StringIO()
    call_command("grading_table", stdout=out)
    return out.getvalue()


def test_docs_grading_md_is_the_generated_table():
    assert DOC.read_text() == _generated(), "regenerate: python manage.py grading_table > docs/grading.md"


def test_every_catalogue_competition_has_one_row():
    table = _generated()
    ids = [p.name for p in (settings.CATALOGUE_DIR / "competitions").iterdir() if (p / "config.yaml").is_file()]
    assert len(ids) == 82
    for cid in ids:
        assert table.count(f"\n| {cid} |") == 1, cid
    graded = [line for line in table.splitlines() if line.startswith("| ") and "not graded yet" not in line]
    assert len(graded) - 1 == len(SPECS)  # minus the header row


def test_rows_say_how_rows_and_values_are_read():
    assert "only answers rows with `u_out` == 0 are scored" in row("ventilator-pressure-prediction")
    assert "each in [1, 100]" in row("petfinder-pawpularity-score")
    assert "by position" in row("nomad2018-predict-transparent-conductors")
    assert "no other columns allowed" in row("whale-categorization-playground")
    assert "labels typed as pandas reads them" in row("spaceship-titanic")
    assert "MLE-bench would print -inf" in row("champs-scalar-coupling")

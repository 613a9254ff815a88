"""CSV downloads never hand a spreadsheet a formula: text cells that start like one are neutralised."""

from __future__ import annotations

import csv
import io

import pytest

from leaderboard.runs.experiments import ExperimentSpec
from leaderboard.runs.submission import submit_run
from leaderboard.trajectories.exports import csv_cell

HOSTILE = ["=HYPERLINK(\"http://evil\",\"x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tTAB", "\rCR"]


@pytest.mark.parametrize("text", HOSTILE)
def test_formula_like_text_is_prefixed(text):
    assert csv_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["aide", "gpt-4o", "", 1.5, -3.25, None, 0])
def test_other_values_are_kept(value):
    assert csv_cell(value) == value


@pytest.mark.parametrize("url", ["/?split=dev&format=csv", "/api/leaderboard/?split=dev&format=csv"])
def test_leaderboard_downloads_neutralise_agent_and_model_names(client, alice, catalogue, url):
    submit_run(owner=alice, competition="spaceship-titanic", seed=0,
               experiment=ExperimentSpec(agent_name="=cmd|' /C calc'!A0", model_name="@SUM(1)"),
               self_reported_score=0.8)
    response = client.get(url)
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    [row] = [r for r in rows if "cmd" in r["agent"]]
    assert row["agent"].startswith("'=") and row["model"] == "'@SUM(1)"
    assert not any(str(v).startswith(("=", "+", "@")) for r in rows for v in r.values())

"""manage.py make_scaling_data: the seeded, labelled synthetic speed data set."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from leaderboard.analysis import scaling_data
from leaderboard.analysis.scaling import hardware_groups
from leaderboard.models import Experiment, Run, Snapshot


def _make(**options):
    call_command("make_scaling_data", experiments=8, split="lite", seeds=2, snapshots=3, **options)


def test_the_data_set_has_the_asked_size_and_is_labelled_synthetic(catalogue):
    _make()
    n_competitions = 22
    assert Experiment.objects.count() == 8 and Run.objects.count() == 8 * n_competitions * 2
    assert Snapshot.objects.count() == Run.objects.count() * 3
    assert all(name.startswith("synthetic-") for name in Experiment.objects.values_list("agent__name", flat=True))
    assert not Run.objects.exclude(notes=scaling_data.NOTE).exists()
    assert {len(group) for group in hardware_groups(Experiment.objects.all())} == {len(scaling_data.HARDWARE)}
    # A run's last snapshot holds its final grade; a medal once reached is kept.
    for run in Run.objects.all()[:50]:
        rows = list(run.snapshots.order_by("elapsed_seconds").values_list("elapsed_seconds", "any_medal"))
        medals = [m for _, m in rows]
        assert medals[-1] == run.any_medal and medals == sorted(medals)
        assert json.loads(run.snapshot_timeline) == [[t, int(m)] for t, m in rows]  # the copy the curve reads


def test_the_same_seed_gives_the_same_data_and_clear_removes_it(catalogue):
    _make(seed=3)
    first = list(Run.objects.order_by("experiment__hardware", "experiment__agent__name", "experiment__model__name",
                                      "competition_id", "seed").values_list("any_medal", flat=True))
    call_command("make_scaling_data", clear=True)
    assert not Run.objects.exists() and not Experiment.objects.exists()
    _make(seed=3)
    again = list(Run.objects.order_by("experiment__hardware", "experiment__agent__name", "experiment__model__name",
                                      "competition_id", "seed").values_list("any_medal", flat=True))
    assert first == again


def test_bad_options_are_refused(catalogue):
    with pytest.raises(CommandError, match="unknown split"):
        call_command("make_scaling_data", split="nope")
    with pytest.raises(CommandError, match="at least 1"):
        call_command("make_scaling_data", seeds=0)

"""The time curve of runs shorter than an hour: budgets at the moments grades change (not rounded
past them), an axis unit chosen from the budgets, and points wherever runs have grades."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from leaderboard.models import Agent, Benchmark, Competition, Experiment, LanguageModel, Run, Snapshot, Split
from leaderboard.runs import snapshots

pytestmark = pytest.mark.django_db


def short_world(time_limit_minutes: float = 2, with_snapshots: bool = False) -> Experiment:
    """Two competitions, two seeds of a 2-minute job; each run graded after 40-55 s."""
    split = Split.objects.create(benchmark=Benchmark.objects.get(slug="mle-bench"), slug="short-test", name="Short")
    competitions = list(Competition.objects.filter(benchmark__slug="mle-bench", n_teams__gt=0).order_by("slug")[:2])
    split.competitions.set(competitions)
    experiment = Experiment.objects.create(agent=Agent.objects.create(name="quick"),
                                           model=LanguageModel.objects.create(name="no-llm"),
                                           time_limit_hours=time_limit_minutes / 60)
    for seed in range(2):
        for c, competition in enumerate(competitions):
            run = Run.objects.create(experiment=experiment, competition=competition, seed=seed, status="graded",
                                     valid_submission=True, any_medal=c == 0, duration_s=40 + 5 * c + 5 * seed)
            if with_snapshots:
                for t, medal in ((10.0, False), (30.0, c == 0)):
                    Snapshot.objects.create(run=run, elapsed_seconds=t, status="graded", any_medal=medal)
                snapshots.refresh_timeline(run.pk)
    return experiment


def _time(**params) -> dict:
    response = APIClient().get("/api/scaling/time/", {"split": "short-test", **params})
    assert response.status_code == 200, response.content
    return response.json()


def test_runs_without_snapshots_get_points_at_their_durations_in_seconds(catalogue):
    short_world()
    data = _time()
    assert data["time_unit"] == {"name": "seconds", "seconds": 1.0}
    seconds = [round(h * 3600, 6) for h in data["hours"]]
    assert seconds == [40.0, 45.0, 50.0, 120.0]  # the durations, then the time limit
    points = data["experiments"][0]["points"]
    assert [p["any_medal_pct"] for p in points] == [25.0, 50.0, 50.0, 50.0]
    assert [p["budget"] for p in points] == ["40 s", "45 s", "50 s", "2 min"]


def test_a_snapshot_counts_at_its_own_budget(catalogue):
    """30 s is 0.008333... h: a budget rounded to 0.0083 h (29.88 s) lost the snapshot taken at 30 s."""
    short_world(with_snapshots=True)
    data = _time()
    by_budget = {p["budget"]: p["any_medal_pct"] for p in data["experiments"][0]["points"]}
    assert by_budget["10 s"] == 0.0 and by_budget["30 s"] == 50.0


def test_minutes_for_budgets_under_two_hours(catalogue):
    short_world(time_limit_minutes=30)
    assert _time()["time_unit"] == {"name": "minutes", "seconds": 60.0}
    assert _time(hours="1,2")["time_unit"] == {"name": "minutes", "seconds": 60.0}
    assert _time(hours="1,24")["time_unit"] == {"name": "hours", "seconds": 3600.0}


def test_budgets_are_written_as_people_write_durations(catalogue):
    short_world(with_snapshots=True)
    data = _time(hours="10s, 0.5 min,45sec,2m")
    assert [round(h * 3600, 9) for h in data["hours"]] == [10.0, 30.0, 45.0, 120.0]
    assert [p["budget"] for p in data["experiments"][0]["points"]] == ["10 s", "30 s", "45 s", "2 min"]
    assert _time(hours="1,0.5h,90 minutes")["hours"] == [0.5, 1.0, 1.5]  # a bare number is hours, as before
    for bad in ("soon", "5 parsecs", "1e999", "inf", "-1h"):
        response = APIClient().get("/api/scaling/time/", {"split": "short-test", "hours": bad})
        assert response.status_code == 400 and "durations" in response.content.decode(), bad

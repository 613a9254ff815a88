"""Durations are written for people (minutes and seconds under an hour), on the leaderboard and the
experiment page, never as a float of hours like 0.03333333333333333."""

from __future__ import annotations

import pytest

from leaderboard.lib.durations import axis_unit, format_hours, format_seconds
from leaderboard.models import Agent, Experiment, LanguageModel, Run


@pytest.mark.parametrize("seconds, text", [
    (0.25, "0.25 s"), (5, "5 s"), (59.4, "59 s"), (59.6, "1 min"), (60, "1 min"), (90, "1 min 30 s"), (120, "2 min"),
    (3599, "59 min 59 s"), (3599.6, "1 h"), (3600, "1 h"), (5400, "1 h 30 min"), (86400, "24 h"), (90000, "25 h"),
])
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


def test_format_hours_and_unknowns():
    assert format_hours(2 / 60) == "2 min" and format_hours(24) == "24 h" and format_hours(0.5) == "30 min"
    assert format_hours(None) == "–" and format_seconds(float("nan")) == "–" and format_seconds(-1) == "–"


def test_axis_unit_follows_the_longest_budget():
    assert axis_unit([30, 90]) == {"name": "seconds", "seconds": 1.0}
    assert axis_unit([60, 1800]) == {"name": "minutes", "seconds": 60.0}
    assert axis_unit([3600, 86400]) == {"name": "hours", "seconds": 3600.0}
    assert axis_unit([]) == {"name": "seconds", "seconds": 1.0}


def test_leaderboard_and_experiment_page_print_minutes(db, catalogue, client):
    experiment = Experiment.objects.create(agent=Agent.objects.create(name="quick-agent"),
                                           model=LanguageModel.objects.create(name="no-llm"), time_limit_hours=2 / 60)
    for competition in catalogue.filter(splits__slug="low"):
        Run.objects.create(experiment=experiment, competition=competition, status=Run.Status.GRADED,
                           valid_submission=True, score=0.5)
    board = client.get("/?split=lite").content.decode()
    assert ">2 min</td>" in board and ">0.0333" not in board  # the sort key keeps the number
    page = client.get(f"/experiments/{experiment.pk}/").content.decode()
    assert "2 min" in page and "333 h" not in page

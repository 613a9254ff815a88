"""time-limit: the run's duration (recorded, else its last step's time) against the experiment's limit."""

from __future__ import annotations

import pytest

from tests.trust.support import check, make_run

pytestmark = pytest.mark.django_db


def _steps(times: list[float]) -> list[dict]:
    return [{"kind": "message", "t": t, "title": f"at {t}"} for t in times]


def test_a_recorded_duration_past_the_limit_is_a_violation():
    run = make_run(_steps([0, 1800, 3700, 3900]), time_limit_hours=1, duration_s=3900)
    hit = check(run, "time-limit")
    assert hit.severity == "violation"
    assert hit.steps == [2, 3]  # the steps after limit + grace (60 s)
    assert hit.evidence["duration_s"] == 3900 and hit.evidence["limit_s"] == 3600


def test_without_a_recorded_duration_the_last_step_decides():
    hit = check(make_run(_steps([0, 100, 7300]), time_limit_hours=2), "time-limit")
    assert hit is not None and hit.evidence["source"] == "the last step's time"


@pytest.mark.parametrize("fields,times", [
    ({"time_limit_hours": 1, "duration_s": 3650}, [0, 3650]),  # within the grace a runner's stop takes
    ({"time_limit_hours": 24, "duration_s": 24 * 3600 + 600}, [0]),  # 1% of 24 h is more than 60 s
    ({"time_limit_hours": None, "duration_s": 10**6}, [0]),  # no limit to overrun
    ({"time_limit_hours": 1, "duration_s": 3000}, [0, 3000]),
], ids=["grace", "one-percent", "no-limit", "within"])
def test_near_misses_are_not_findings(fields, times):
    assert check(make_run(_steps(times), **fields), "time-limit") is None

"""Imported at start by a test's worker process, never by the suite itself (webapp.test_settings:
MEDALBOARD_TEST_WORKER_IMPORTS): grading a submission and importing a trajectory each take
TEST_SLOW_WORK_S longer, and each start and end (and a research baseline's starter run's, which its
test makes slow itself) is a line of TEST_WORK_LOG, so a test can kill the
worker in the middle of the work and count how often it was done (tests/job_support.work_done)."""

from __future__ import annotations

import os
import time

from django.conf import settings

from leaderboard import grading
from leaderboard.runs import submission
from runner.research import baseline


def _note(event: str, what: str) -> None:
    with open(settings.TEST_WORK_LOG, "a") as log:
        log.write(f"{event} {what} {os.getpid()} {time.time()}\n")


def _slowed(what: str, real, *, sleep: bool = True):
    def slow(*args, **kwargs):
        _note("start", what)
        if sleep:
            time.sleep(settings.TEST_SLOW_WORK_S)
        result = real(*args, **kwargs)
        _note("done", what)
        return result

    return slow


grading.grade_submission = _slowed("grading", grading.grade_submission)
# Inside the transaction that stores the run: the kill lands after the run's first rows were written.
submission._import_trajectory = _slowed("import", submission._import_trajectory)
# Noted only: the starter is the task's own train.py, a real process the test makes slow.
baseline._run_starter = _slowed("baseline", baseline._run_starter, sleep=False)

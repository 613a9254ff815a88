"""Imported at start by a test's worker process, never by the suite itself (webapp.test_settings:
MEDALBOARD_TEST_WORKER_IMPORTS): grading a submission and importing a trajectory each take
TEST_SLOW_WORK_S longer, and each start and end is a line of TEST_WORK_LOG, so a test can kill the
worker in the middle of the work and count how often it was done (tests/job_support.work_done)."""

from __future__ import annotations

import os
import time

from django.conf import settings

from leaderboard import grading
from leaderboard.runs import submission


def _note(event: str, what: str) -> None:
    with open(settings.TEST_WORK_LOG, "a") as log:
        log.write(f"{event} {what} {os.getpid()} {time.time()}\n")


def _slowed(what: str, real):
    def slow(*args, **kwargs):
        _note("start", what)
        time.sleep(settings.TEST_SLOW_WORK_S)
        result = real(*args, **kwargs)
        _note("done", what)
        return result

    return slow


grading.grade_submission = _slowed("grading", grading.grade_submission)
# Inside the transaction that stores the run: the kill lands after the run's first rows were written.
submission._import_trajectory = _slowed("import", submission._import_trajectory)

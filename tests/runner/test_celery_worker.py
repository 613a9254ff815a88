"""A real Celery worker grades an uploaded run through the configured broker.

Locally that is the embedded filesystem broker; in CI it is Redis (CELERY_BROKER_URL), so this test
exercises the same path a GPU host joining as a worker would.
"""

import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings

from leaderboard.models import Run
from tests.runs.test_submission import answers_for, submit
from webapp.celery import app


@pytest.fixture
def worker():
    # The test settings point the embedded broker at a throwaway folder; in CI this is Redis.
    assert settings.CELERY_BROKER_URL.startswith(("filesystem", "redis"))
    app.conf.task_always_eager = False
    app.control.purge()  # messages other tests published for runs that no longer exist
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10, loglevel="WARNING"):
        yield


def _wait_for(run: Run, statuses, timeout: float = 60.0) -> Run:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status in statuses:
            return run
        time.sleep(1.0)
    raise AssertionError(f"run {run.pk} still {run.status} after {timeout}s")


def test_worker_grades_an_upload(transactional_db, catalogue, alice, tmp_path, worker):
    answers_for(tmp_path, catalogue)
    run = submit(alice)  # autocommit: the on_commit hook enqueues at once
    assert run.status == Run.Status.PENDING
    run = _wait_for(run, {Run.Status.GRADED, Run.Status.FAILED})
    assert run.status == Run.Status.GRADED, run.grading_error
    assert run.score == pytest.approx(1.0) and run.gold_medal
    assert run.verification == Run.Verification.VERIFIED

"""Fixtures the runner's tests share."""

from __future__ import annotations

import pytest

from tests.job_support import WorkerProcess
from tests.remote_runner_support import RemoteRunner


@pytest.fixture(autouse=True)
def _no_runner_left_behind():
    """A `manage.py runner` a test started and did not wait for (the test failed first) is killed after it."""
    yield
    RemoteRunner.stop_all()


@pytest.fixture
def grading_worker(tmp_path):
    """The site's own Celery worker on the default queue: it grades what a remote runner uploads."""
    worker = WorkerProcess(tmp_path / "grading.log", "celery")
    yield worker
    worker.stop()

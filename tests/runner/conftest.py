"""Fixtures the runner's tests share."""

from __future__ import annotations

import pytest

from tests.job_support import WorkerProcess


@pytest.fixture
def grading_worker(tmp_path):
    """The site's own Celery worker on the default queue: it grades what a remote runner uploads."""
    worker = WorkerProcess(tmp_path / "grading.log", "celery")
    yield worker
    worker.stop()

"""Fixtures the runner's tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.job_support import WorkerProcess
from tests.remote_runner_support import RemoteRunner, loop_runner


@pytest.fixture(autouse=True)
def _no_runner_left_behind():
    """A `manage.py runner` a test started and did not wait for (the test failed first) is killed after it."""
    yield
    RemoteRunner.stop_all()


@pytest.fixture
def loopback_runner(request, transactional_db, fast_jobs, settings):
    """The runner a job task runs on, as on a single machine: runner.remote's loop in a thread of this
    test, a client of the live server through the runner API (tests/remote_runner_support.LoopRunner);
    `.run_graded(task_id)` runs the next queued task and grades its run as the site does."""
    return loop_runner(request, Path(settings.RUNNER_WORK_DIR))


@pytest.fixture
def loopback(job_world, loopback_runner):
    """The loopback runner, in job_world (spaceship-titanic, the scripted agent)."""
    return loopback_runner


@pytest.fixture
def grading_worker(tmp_path):
    """The site's own Celery worker on the default queue: it grades what a remote runner uploads."""
    worker = WorkerProcess(tmp_path / "grading.log", "celery")
    yield worker
    worker.stop()


@pytest.fixture
def claimed(alice, job_world, django_capture_on_commit_callbacks):
    """A scripted job's task claimed through the runner API by runner "remote-a": its client, the
    claim's answer, the job."""
    from tests.job_support import scripted_job
    from tests.runner.test_runner_api import API, runner_client

    with django_capture_on_commit_callbacks(execute=False):  # nothing reaches a broker
        job = scripted_job(alice)
    client = runner_client("remote-a")
    answer = client.post(API + "claim/", {"wait_s": 0}, format="json")
    assert answer.status_code == 200, answer.content
    return client, answer.json(), job

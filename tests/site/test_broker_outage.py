"""A broker outage loses nothing: uploads, gradings and jobs made before and during it all finish
once it is back, the site's worker and a runner attached by URL survive it, and their logs say what
happened in one line each, with no tracebacks; `manage.py runner`, the site's supervised Celery
worker, starts its worker again when it exits.

The broker is a redis-server of the test's own on a free port (never the machine's Redis), stopped
and restarted with its append-only file, as a production broker with persistence comes back."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from kombu import pools

from leaderboard.models import Run, RunIntake
from runner.models import JobTask
from tests.api.test_runs import payload, token_client
from tests.job_support import FAST_ENV, WorkerProcess, database_url, needs_agent_tools, scripted_job, wait_until
from tests.redis_support import RedisServer
from tests.remote_runner_support import RemoteRunner, new_token
from tests.runs.test_submission import submit
from webapp.celery import app

OUTAGE_ENV = {"CELERY_VISIBILITY_TIMEOUT": "10", "MEDALBOARD_STALE_PENDING_S": "3"}


def _use_broker(url: str, options: dict) -> None:
    """Point this process's Celery app (what the site publishes with) at another broker."""
    app.conf.broker_url = url
    app.conf.broker_transport_options = options
    # The site names its embedded transport only for filesystem:// (settings.CELERY_BROKER_TRANSPORT),
    # and a named transport would win over the URL's scheme.
    app.conf.broker_transport = "webapp.broker:Transport" if url.startswith("filesystem") else None
    # kombu keeps producer pools in a registry keyed by the connection: a pool closed here would be
    # handed out again for the same URL, so the registry is emptied (its pools closed) instead
    pools.reset()
    app._pool = None
    app.__dict__.get("amqp") and setattr(app.amqp, "_producer_pool", None)


@pytest.fixture
def broker(tmp_path, settings, monkeypatch):
    server = RedisServer(data_dir=tmp_path).start()
    previous = (app.conf.broker_url, app.conf.broker_transport_options)
    # Celery's conf.broker_url prefers the CELERY_BROKER_URL variable (set in CI) to what is assigned
    monkeypatch.setenv("CELERY_BROKER_URL", server.url)
    _use_broker(server.url, {"visibility_timeout": 10})
    app.conf.task_always_eager = False
    settings.INTAKE_IN_REQUEST = False
    settings.INTAKE_WAIT_S = 0
    settings.STALE_PENDING_S = 3
    yield server
    server.stop()
    _use_broker(*previous)


class RunnerProcess(WorkerProcess):
    """`manage.py runner` as the site's Celery runner (its grading worker, supervised), on the test
    database and broker."""

    def __init__(self, log_path: Path, broker_url: str) -> None:
        env = {**os.environ, **FAST_ENV, **OUTAGE_ENV, "DJANGO_SETTINGS_MODULE": "webapp.test_settings",
               "DATABASE_URL": database_url(), "CELERY_BROKER_URL": broker_url,
               "MEDALBOARD_RUNNER_WORK_DIR": str(django_settings.RUNNER_WORK_DIR)}
        self.log_path = log_path
        self.log = open(log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "runner", "--backend", "local", "--name", "test-runner",
             "--queues", "celery", "--concurrency", "1", "--loglevel", "INFO"],
            cwd=django_settings.BASE_DIR, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)


def _upload(user, seed: int) -> int:
    answer = token_client(user).post("/api/runs/", payload(seed=seed), format="multipart")
    assert answer.status_code == 202, answer.content
    return answer.json()["id"]


def _finished(intakes: list[int], runs: list[int], jobs: list) -> dict[str, int]:
    """How many of the uploads (imported and graded), gradings and job tasks (succeeded, their runs
    graded) are done."""
    imported = RunIntake.objects.filter(pk__in=intakes, status=RunIntake.Status.IMPORTED)
    return {"uploads": Run.objects.filter(pk__in=imported.values_list("run_id", flat=True),
                                          status=Run.Status.GRADED).count(),
            "gradings": Run.objects.filter(pk__in=runs, status=Run.Status.GRADED).count(),
            "jobs": Run.objects.filter(job_task__job__in=jobs, job_task__status=JobTask.Status.SUCCEEDED,
                                       status=Run.Status.GRADED).count()}


def _state(intakes: list[int], runs: list[int], jobs: list) -> str:
    return (f"intakes {list(RunIntake.objects.filter(pk__in=intakes).values_list('status', 'run_id'))}, "
            f"runs {list(Run.objects.filter(pk__in=runs).values_list('status', 'grading_error'))}, "
            f"intake runs {list(Run.objects.filter(intakes__in=intakes).values_list('status', 'grading_error'))}, "
            f"tasks {list(JobTask.objects.filter(job__in=jobs).values_list('status', 'error'))}")


@needs_agent_tools
@pytest.mark.parametrize("comes_back", ["with its data", "empty"])
def test_everything_made_before_and_during_an_outage_finishes(live_server, transactional_db, alice, job_world,
                                                               broker, tmp_path, comes_back, caplog):
    """Two uploads, two gradings and three jobs, before and during the outage, all finish, whether
    the broker comes back with its queues (an append-only file) or empty (a new server): then the
    messages published before it went are gone and the sweeps publish their work again."""
    worker = WorkerProcess(tmp_path / "worker.log", "celery", extra_env={
        "CELERY_BROKER_URL": broker.url, **OUTAGE_ENV})
    runner = RemoteRunner(live_server.url, new_token("outage-runner"), tmp_path / "runner")
    try:
        wait_until(lambda: " ready." in worker.output(), 60, "the worker ready", worker)
        # Distinct uploads (seeds): identical ones would be one run. The first job's agent runs through
        # the outage (its run's grading asked for while the broker is away); the second waits in the
        # queue behind it (the runner runs one at a time).
        intakes, runs = [_upload(alice, 1)], [submit(alice, seed=2).pk]
        jobs = [scripted_job(alice, steps=12, sleep=0.5)]
        wait_until(lambda: JobTask.objects.filter(job=jobs[0], status=JobTask.Status.RUNNING).exists(), 60,
                   "the first job running", runner)
        jobs.append(scripted_job(alice, steps=2, sleep=0.2))
        broker.stop()
        intakes.append(_upload(alice, 3))
        runs.append(submit(alice, seed=4).pk)
        jobs.append(scripted_job(alice, steps=3, sleep=0.5))
        time.sleep(8)  # the worker and runner notice, and try to reconnect
        if comes_back == "empty":
            broker.data_dir = None  # a new server at the same address: no append-only file to read
        broker.start()
        made = {"uploads": len(intakes), "gradings": len(runs), "jobs": len(jobs)}
        assert made == {"uploads": 2, "gradings": 2, "jobs": 3}
        try:
            wait_until(lambda: _finished(intakes, runs, jobs) == made, 120, "everything finished")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {_finished(intakes, runs, jobs)} of {made}; "
                                 f"{_state(intakes, runs, jobs)}") from None
        assert runner.process.poll() is None, runner.output()
    finally:
        worker.stop()
        RemoteRunner.stop_all()
    for process in (worker, runner):
        log = process.log_path.read_text(errors="replace")
        assert "AttributeError" not in log, log[-5000:]
        assert not unexplained_tracebacks(log), log[-5000:]
        assert "CPendingDeprecationWarning" not in log  # Celery's multi-line notice on each connection loss
    assert "broker unavailable: could not enqueue" in caplog.text + worker.output()  # the site's, the sweep's


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(child) for child in found]


@needs_agent_tools
def test_the_runner_starts_its_worker_again_when_it_exits(transactional_db, alice, job_world, broker, tmp_path):
    """Celery exits on some broker outages (kombu's restore_unacked failing); `manage.py runner`
    starts its worker again, and the runner grades as before."""
    runner = RunnerProcess(tmp_path / "runner.log", broker.url)
    try:
        first = wait_until(lambda: _children(runner.process.pid), 30, "a worker started", runner)
        os.kill(first[0], 9)
        wait_until(lambda: "its worker exited" in runner.output(), 30, "the exit noticed", runner)
        wait_until(lambda: _children(runner.process.pid) not in ([], first), 30, "a new worker", runner)
        run = submit(alice, seed=5)
        wait_until(lambda: Run.objects.filter(pk=run.pk, status=Run.Status.GRADED).exists(), 60,
                   "the run graded by the new worker", runner)
        assert runner.process.poll() is None
    finally:
        runner.stop()
    assert runner.process.returncode is not None  # a SIGTERM still stops it (and its worker)


def test_a_send_that_fails_is_one_line_and_the_next_one_uses_new_connections(caplog, monkeypatch):
    from leaderboard.tasks import grade_run
    from webapp.queue import GRADE_RUN, publish

    def down(*args, **kwargs):
        raise AttributeError("'NoneType' object has no attribute 'connection_errors'")

    monkeypatch.setattr(grade_run, "apply_async", down)
    app._pool = object()  # a pool a failed send must not reuse
    assert publish(GRADE_RUN, [1], what="grading of run 1") is None
    [line] = [r.getMessage() for r in caplog.records if "broker unavailable" in r.getMessage()]
    assert "grading of run 1" in line and "AttributeError" in line and "\n" not in line
    assert app._pool is None


# What a worker may log while its broker is down: kombu acknowledging a message over a connection
# that went with the server prints the connection error with its traceback. Anything else is a bug.
BROKER_DOWN = re.compile(r"^(redis\.exceptions\.ConnectionError|ConnectionRefusedError|ConnectionResetError|"
                         r"kombu\.exceptions\.OperationalError|redis\.exceptions\.TimeoutError)\b")


def unexplained_tracebacks(log: str) -> list[str]:
    """The last line (the exception) of each traceback in the log that is not the broker being down."""
    endings = []
    for block in log.split("Traceback (most recent call last):")[1:]:
        lines = [line for line in block.splitlines() if line and not line.startswith((" ", "\t"))]
        last = lines[0] if lines else ""
        if not BROKER_DOWN.match(last):
            endings.append(last)
    return endings

"""A runner attached with only the site's URL and a token: the site runs in a live server, the
runner is `manage.py runner` in a process whose environment holds nothing but the URL, the token
and its own folders (no database, no broker, no SECRET_KEY: its settings refuse every query), and
the run it uploads is graded by the site's own grading worker."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from leaderboard.models import Run, Snapshot
from runner.models import JobTask, RemoteUpload
from tests.job_support import WorkerProcess, needs_agent_tools, scripted_job, wait_until

pytestmark = [needs_agent_tools, pytest.mark.serial]

RUNNER_ENV_ALLOWED = {
    "PATH",
    "HOME",
    "MEDALBOARD_SITE_URL",
    "MEDALBOARD_RUNNER_TOKEN",
    "MEDALBOARD_RUNNER_WORK_DIR",
    "MEDALBOARD_RUNNER_LOST_SITE_S",
}


def new_token(name: str) -> str:
    out = io.StringIO()
    call_command("create_runner", name, stdout=out, stderr=io.StringIO())
    return out.getvalue().strip().splitlines()[-1]


class RemoteRunner:
    """`manage.py runner` with the URL and the token in its environment, and nothing of the site's."""

    def __init__(self, url: str, token: str, folder: Path, *args: str) -> None:
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(folder),
            "MEDALBOARD_SITE_URL": url,
            "MEDALBOARD_RUNNER_TOKEN": token,
            "MEDALBOARD_RUNNER_WORK_DIR": str(folder / "work"),
            "MEDALBOARD_RUNNER_LOST_SITE_S": "30",
        }
        assert set(self.env) <= RUNNER_ENV_ALLOWED
        self.log_path = folder / "runner.log"
        self.log = open(self.log_path, "ab")  # noqa: SIM115 - closed in wait()
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "runner", "--name", "remote-test", *args],
            cwd=settings.BASE_DIR,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait(self, timeout: float) -> int:
        try:
            return self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.log.close()

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]


@pytest.fixture
def grading_worker(tmp_path):
    worker = WorkerProcess(tmp_path / "grading.log", "celery")
    yield worker
    worker.stop()


def test_a_runner_with_only_the_url_and_a_token_runs_a_job_the_site_grades(
    live_server, transactional_db, alice, job_world, grading_worker, tmp_path
):
    job = scripted_job(alice, steps=5, sleep=0.3)
    runner = RemoteRunner(live_server.url, new_token("remote-test-runner"), tmp_path, "--tasks", "1")
    code = runner.wait(120)
    assert code == 0, runner.output()
    task = JobTask.objects.select_related("run", "runner").get(job=job)
    assert task.status == JobTask.Status.SUCCEEDED, (task.error, runner.output())
    assert task.runner.name == "remote-test-runner"
    run = wait_until(
        lambda: Run.objects.filter(pk=task.run_id, status=Run.Status.GRADED).first(), 60, "graded", grading_worker
    )
    assert run.origin == Run.Origin.JOB and run.score == pytest.approx(1.0) and run.gold_medal
    assert run.trajectory.n_steps == 5 and run.n_steps == 5
    assert {a.name for a in run.artifacts.all()} >= {"submission/submission.csv", "logs/trajectory.jsonl"}
    wait_until(
        lambda: not Snapshot.objects.filter(run=run, status__in=("pending", "grading")).exists(),
        60,
        "snapshots graded",
        grading_worker,
    )
    snapshots = list(run.snapshots.order_by("elapsed_seconds"))
    assert snapshots and snapshots[-1].score == pytest.approx(1.0)
    assert RemoteUpload.objects.filter(task=task, used=True).count() == RemoteUpload.objects.filter(task=task).count()
    assert "Traceback" not in runner.output()


def test_the_runners_settings_refuse_the_database():
    env = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "runner.remote.settings"}
    probe = (
        "import django; django.setup(); from django.db import connection\n"
        "try:\n    connection.cursor()\nexcept Exception as exc:\n    print('refused', type(exc).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=60
    )
    assert "refused ImproperlyConfigured" in out.stdout, out.stderr

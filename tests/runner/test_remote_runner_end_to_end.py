"""A runner attached with only the site's URL and a token: the site runs in a live server, the
runner is `manage.py runner` in a process whose environment holds nothing but the URL, the token
and its own folders (no database, no broker, no SECRET_KEY: its settings refuse every query), and
the run it uploads is graded by the site's own grading worker."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings

from leaderboard.models import Run, Snapshot
from runner.models import JobTask, RemoteUpload
from tests.job_support import needs_agent_tools, scripted_job, wait_until
from tests.remote_runner_support import RemoteRunner, new_token

pytestmark = [needs_agent_tools, pytest.mark.serial]


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


def test_a_jobs_secret_never_lands_on_the_runners_disk(live_server, transactional_db, alice, job_world, tmp_path):
    from runner.jobs.services import create_job

    secret = "remote-secret-7f3a9c1e"
    create_job(
        user=alice,
        agent="scripted",
        competitions=["spaceship-titanic"],
        time_limit_minutes=1,
        settings={"steps": 2, "sleep": 0.1},
        env={"MEDALBOARD_TEST_SECRET": secret},
    )
    runner = RemoteRunner(live_server.url, new_token("remote-secret"), tmp_path / "host", "--tasks", "1")
    assert runner.wait(120) == 0, runner.output()
    task = JobTask.objects.get(job__created_by=alice)
    assert task.status == JobTask.Status.SUCCEEDED, task.error
    left = [p for p in (tmp_path / "host").rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert left == [], left


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


def test_an_image_removed_while_the_runner_registers_does_not_stop_it():
    """The images a runner registers come from the engine's listing alone: an image removed between
    the listing and its inspection (images.list() inspects each one) stopped the runner with
    ImageNotFound; the hostile-agent suite met it on a Docker host shared with other tests."""
    from types import SimpleNamespace

    import docker

    from runner.remote.serve import _images

    def inspects_each_image():
        raise docker.errors.ImageNotFound("no such image: sha256:f548cc98")

    listing = [{"RepoTags": ["medalboard-agent:bookworm", "b:1"]}, {"RepoTags": None}, {"RepoTags": ["<none>:<none>"]}]
    engine = SimpleNamespace(
        api=SimpleNamespace(images=lambda: listing), images=SimpleNamespace(list=inspects_each_image)
    )
    assert _images(SimpleNamespace(name="docker", client=engine)) == ["b:1", "medalboard-agent:bookworm"]

"""Runners register, heartbeat, go offline when heartbeats stop, and can be drained."""

from __future__ import annotations

import os
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from runner.jobs import registry
from runner.models import JobTask, Runner
from tests.job_support import scripted_job


def test_the_runner_command_registers_this_machine(db, capsys, settings, tmp_path):
    settings.RUNNER_WORK_DIR = tmp_path
    call_command("runner", "--backend", "local", "--name", "box-1", "--register-only")
    runner = Runner.objects.get(name="box-1")
    assert runner.backend == "local" and runner.images == ["*"] and runner.cpu_count >= 1
    assert runner.queues[0] == "jobs.cpu" and "celery" in runner.queues
    assert runner.current_status == Runner.Status.ONLINE
    assert "runner box-1 (local)" in capsys.readouterr().out


def test_the_runner_command_takes_the_docker_runtime_and_hands_it_to_its_worker(db, capsys, settings, tmp_path,
                                                                               monkeypatch):
    from runner.backends import StartFailed
    from runner.backends.docker import DockerBackend
    from runner.management.commands import runner as command
    from tests.conftest import REQUIRE_SERVICES

    settings.RUNNER_WORK_DIR = tmp_path
    with pytest.raises(CommandError, match="--runtime is an option of the docker backend, not local"):
        call_command("runner", "--backend", "local", "--runtime", "runsc", "--register-only")
    try:
        DockerBackend(runtime="runsc").check()
    except StartFailed as exc:
        pytest.fail(str(exc)) if REQUIRE_SERVICES else pytest.skip(str(exc))
    name = f"test-runtime-{uuid.uuid4().hex[:8]}"
    with pytest.raises(CommandError, match="no runtime 'no-such-runtime'"):
        call_command("runner", "--backend", "docker", "--runtime", "no-such-runtime", "--name", name)
    for variable in ("MEDALBOARD_RUNNER_NAME", "MEDALBOARD_RUNNER_BACKEND", "MEDALBOARD_DOCKER_RUNTIME"):
        monkeypatch.setenv(variable, "before")  # restored after the test, whatever the command sets
    worker_env = {}
    monkeypatch.setattr(command, "supervise", lambda argv, runner_name: worker_env.update(os.environ))
    call_command("runner", "--backend", "docker", "--runtime", "runsc", "--name", name)
    assert Runner.objects.get(name=name).runtime == "runsc"
    assert f"runner {name} (docker, runsc)" in capsys.readouterr().out
    assert (worker_env["MEDALBOARD_RUNNER_NAME"], worker_env["MEDALBOARD_DOCKER_RUNTIME"]) == (name, "runsc")


def test_missed_heartbeats_show_a_runner_offline(db, settings):
    settings.RUNNER_HEARTBEAT_S, settings.RUNNER_OFFLINE_AFTER_HEARTBEATS = 10, 3
    runner = Runner.objects.create(name="r", last_heartbeat=timezone.now() - timedelta(seconds=29))
    assert runner.current_status == Runner.Status.ONLINE
    Runner.objects.filter(pk=runner.pk).update(last_heartbeat=timezone.now() - timedelta(seconds=31))
    runner.refresh_from_db()
    assert runner.current_status == Runner.Status.OFFLINE
    registry.heartbeat("r")
    runner.refresh_from_db()
    assert runner.current_status == Runner.Status.ONLINE


def test_a_draining_runner_takes_no_new_task(alice, job_world, django_capture_on_commit_callbacks):
    from tests.runner.test_runner_api import API, runner_client

    client = runner_client("test-runner-api")
    call_command("runner", "--drain", "test-runner-api")
    assert Runner.objects.get(name="test-runner-api").current_status == Runner.Status.DRAINING
    with django_capture_on_commit_callbacks(execute=False):
        task = scripted_job(alice).tasks.get()
    assert client.post(API + "claim/", {"wait_s": 0}, format="json").status_code == 204
    assert JobTask.objects.get(pk=task.pk).status == JobTask.Status.QUEUED  # not claimed
    call_command("runner", "--resume", "test-runner-api")
    assert Runner.objects.get(name="test-runner-api").status == Runner.Status.ONLINE
    assert client.post(API + "claim/", {"wait_s": 0}, format="json").json()["task"] == task.pk
    with pytest.raises(CommandError, match="no runner called 'nope'"):
        call_command("runner", "--drain", "nope")


def test_the_runners_page_says_what_each_runner_takes(client, db):
    from runner.api_v1 import tokens

    Runner.objects.create(name="site-worker", backend="local", queues=["celery"])
    tokens.issue("loopback")
    page = client.get("/runners/").content.decode()
    assert "job tasks, claimed over the runner API" in page
    assert "no job: the site&#x27;s own work (grading, research baselines and evals, sweeps)" in page
    listed = {row["name"]: row["takes"] for row in client.get("/api/runners/").json()}
    assert listed == {"loopback": "job tasks, claimed over the runner API",
                      "site-worker": "no job: the site's own work (grading, research baselines and evals, sweeps)"}

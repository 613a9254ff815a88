"""A runner whose slots are stuck says so: a supervisor that stopped ticking in a live process."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from django.utils import timezone

from runner.host import slots
from runner.jobs.registry import heartbeat
from runner.models import Runner


def _tick(work, task_id: int, pid: int, age_s: float) -> None:
    folder = work / f"task-{task_id}-a1.runner"
    slots.touch(folder, task_id)
    (folder / slots.TICK_FILE).write_text(f"{task_id} {pid}\n")
    then = time.time() - age_s
    os.utime(folder / slots.TICK_FILE, (then, then))


def test_only_a_silent_supervisor_of_a_live_process_is_stuck(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    _tick(tmp_path, 1, os.getpid(), age_s=500)  # silent, alive: stuck
    _tick(tmp_path, 2, os.getpid(), age_s=1)  # ticking: fine
    _tick(tmp_path, 3, dead.pid, age_s=500)  # its process is gone: a leftover, not a stuck slot
    assert slots.stuck(tmp_path, after_s=120) == [{"task": 1, "silent_s": 500}]


@pytest.mark.django_db
def test_the_heartbeat_reports_stuck_slots_and_the_runner_shows_stuck(settings, tmp_path, client):
    settings.RUNNER_WORK_DIR = tmp_path
    Runner.objects.create(name="box", last_heartbeat=timezone.now())
    heartbeat("box")
    assert Runner.objects.get(name="box").current_status == Runner.Status.ONLINE
    _tick(tmp_path, 7, os.getpid(), age_s=slots.STUCK_AFTER_S + 60)
    heartbeat("box")
    runner = Runner.objects.get(name="box")
    assert runner.current_status == Runner.Status.STUCK and runner.stuck_tasks[0]["task"] == 7
    listed = {r["name"]: r for r in client.get("/api/runners/").json()}
    assert listed["box"]["status"] == "stuck"


@pytest.mark.django_db
def test_a_restarted_runner_removes_the_scratch_a_killed_one_left_and_keeps_others(tmp_path, job_world):
    from runner.host.scratch import clean_stale
    from runner.jobs.registry import held_elsewhere
    from runner.models import Job, JobTask

    other = Runner.objects.create(name="other-box", last_heartbeat=timezone.now())
    job = Job.objects.create(experiment_id=_experiment(), agent_id=_agent(), time_limit_s=60)
    mine = JobTask.objects.create(job=job, competition_id=_competition(), seed=0, queue="q", status="running",
                                  runner=job_world)
    theirs = JobTask.objects.create(job=job, competition_id=_competition(), seed=1, queue="q", status="running",
                                    runner=other)
    work = tmp_path / "runner-work"
    for task in (mine, theirs):
        (work / f"task-{task.pk}-a1" / "code").mkdir(parents=True)
        (work / f"task-{task.pk}-a1.runner").mkdir()
    (work / "unrelated").mkdir()
    assert clean_stale(work, keep=held_elsewhere(job_world.name)) == 2
    assert sorted(p.name for p in work.iterdir()) == [f"task-{theirs.pk}-a1", f"task-{theirs.pk}-a1.runner",
                                                          "unrelated"]


def _experiment():
    from leaderboard.runs.experiments import ExperimentSpec, get_or_create_experiment

    return get_or_create_experiment(ExperimentSpec("x", "m")).pk


def _agent():
    from runner.models import AgentDefinition

    return AgentDefinition.objects.get_or_create(name="scripted")[0].pk


def _competition():
    from leaderboard.models import Competition

    return Competition.objects.get(slug="spaceship-titanic").pk

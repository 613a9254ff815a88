"""A job end to end with no services: submitted through create_job (and `submit_job --wait`), a real
runner process (a Celery worker on the filesystem broker in CI on Redis) runs the agent with the
local backend, its steps appear on the run while it works, its snapshots and submission are graded,
and the run is on the leaderboard."""

from __future__ import annotations

import io
import json
import threading

import pytest
from django.core.management import call_command
from django.db import connection

from leaderboard.models import Run, Snapshot
from runner.models import JobTask
from tests.job_support import WorkerProcess, needs_agent_tools, scripted_job, wait_until

pytestmark = needs_agent_tools


def test_a_job_runs_end_to_end_on_a_local_runner(transactional_db, alice, job_world, tmp_path):
    job = scripted_job(alice, seeds=2, steps=5, sleep=0.6)  # committed: both tasks published at once
    runner = WorkerProcess(tmp_path / "runner.log", "jobs.cpu,celery", runner="test-runner")
    try:
        live = wait_until(lambda: Run.objects.filter(job_task__job=job, status=Run.Status.RUNNING,
                                                     n_steps__gte=1).first(), 60, "streaming", runner)
        seen = {live.n_steps}
        while JobTask.objects.filter(pk=live.job_task.pk, status=JobTask.Status.RUNNING).exists():
            seen.add(Run.objects.get(pk=live.pk).n_steps)
        assert len(seen - {0}) >= 2, seen  # steps showed up a few at a time while the agent worked
        wait_until(lambda: all(t.status in JobTask.FINISHED for t in job.tasks.all()), 90, "finished", runner)
        runs = wait_until(lambda: list(Run.objects.filter(job_task__job=job, status=Run.Status.GRADED)) if
                          Run.objects.filter(job_task__job=job, status=Run.Status.GRADED).count() == 2 else None,
                          60, "graded", runner)
        wait_until(lambda: not Snapshot.objects.filter(run__in=runs, status__in=("pending", "grading")).exists(),
                   60, "snapshots graded", runner)
    finally:
        runner.stop()
    assert {t.status for t in job.tasks.all()} == {JobTask.Status.SUCCEEDED}
    for run in runs:
        assert run.origin == Run.Origin.JOB and run.score == pytest.approx(1.0) and run.gold_medal
        assert run.trajectory.n_steps == 5
        snapshots = list(run.snapshots.order_by("elapsed_seconds"))
        assert snapshots and all(s.status == "graded" for s in snapshots)
        assert snapshots[-1].score == pytest.approx(1.0) and snapshots[0].score < 1.0
    assert set(Run.objects.for_leaderboard().filter(experiment=job.experiment)) == set(runs)
    assert job.status == "succeeded"


def test_submit_job_waits_and_prints_one_line_per_task(transactional_db, alice, job_world, tmp_path, settings):
    alice.is_superuser = True
    alice.save()
    out = io.StringIO()
    done = threading.Event()

    def submit():
        try:
            call_command("submit_job", "--agent", "scripted", "--competition", "spaceship-titanic", "--seeds", "2",
                         "--time-limit-minutes", "1", "--agent-settings", '{"steps": 2, "sleep": 0.2}', "--wait",
                         "--poll-seconds", "0.5", stdout=out, stderr=io.StringIO())
        finally:
            connection.close()
            done.set()

    runner = WorkerProcess(tmp_path / "runner.log", "jobs.cpu,celery", runner="test-runner")
    thread = threading.Thread(target=submit)
    try:
        thread.start()
        assert done.wait(120), runner.output()
    finally:
        runner.stop()
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["competition"], r["seed"], r["status"], r["valid_submission"], r["any_medal"]) for r in rows] == [
        ("spaceship-titanic", 0, "succeeded", True, True), ("spaceship-titanic", 1, "succeeded", True, True)]
    assert all(r["score"] == pytest.approx(1.0) and Run.objects.filter(pk=r["run"]).exists() for r in rows)
    assert list(rows[0]) == ["job", "competition", "seed", "status", "run", "score", "valid_submission", "any_medal",
                             "run_status", "grading_error", "state"]
    assert all(r["run_status"] == "graded" and r["grading_error"] is None and r["state"] == "graded" for r in rows)


def test_the_baseline_agent_runs_on_a_smoke_competition(transactional_db, alice, job_world, tmp_path):
    """The built-in baseline, unseen data (scikit-learn's wine as an MLE-bench competition), real runner."""
    call_command("make_smoke_competitions", "--root", str(tmp_path / "smoke"), stdout=io.StringIO())
    from runner.jobs.services import create_job

    job = create_job(user=alice, agent="baseline", competitions=["smoke-wine"], time_limit_minutes=0.5)
    runner = WorkerProcess(tmp_path / "runner.log", "jobs.cpu,celery", runner="test-runner")
    try:
        task = wait_until(lambda: JobTask.objects.filter(job=job, status__in=JobTask.FINISHED).first(), 120,
                          "finished", runner)
        run = wait_until(lambda: Run.objects.filter(pk=task.run_id, status__in=("graded", "failed")).first(), 60,
                         "graded", runner)
    finally:
        runner.stop()
    assert task.status in (JobTask.Status.SUCCEEDED, JobTask.Status.TIMED_OUT), task.error
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None, run.grading_error
    assert run.trajectory.n_steps >= 3 and run.snapshots.exists()
    assert {"plan", "code"} <= set(run.trajectory.kind_counts)

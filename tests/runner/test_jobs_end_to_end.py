"""A job end to end with no services, as `make run` runs it: submitted through create_job (and
`submit_job --wait`), a loopback runner process (`manage.py runner --site URL` with a token, a client of
the live site through the runner API) runs the agent with the local backend, its steps appear on the run
while it works, the site's grading worker (a Celery worker on the filesystem broker, in CI on Redis)
grades its snapshots and submission, and the run is on the leaderboard. The built-in baseline agent on a
smoke competition, the same path with the API in front, is tests/runner/test_jobs_api_end_to_end.py."""

from __future__ import annotations

import io
import json
import threading

import pytest
from django.core.management import call_command
from django.db import connection

from leaderboard.models import Run, Snapshot
from runner.models import JobTask
from tests.job_support import needs_agent_tools, scripted_job, wait_until
from tests.remote_runner_support import RemoteRunner, new_token

pytestmark = [needs_agent_tools, pytest.mark.serial]


def loopback_runner_process(live_server, tmp_path, tasks: int) -> RemoteRunner:
    """`manage.py runner --site` over the loopback, as `make run` starts it, for `tasks` tasks."""
    return RemoteRunner(live_server.url, new_token("loopback-e2e"), tmp_path / "loopback", "--tasks", str(tasks))


def test_a_job_runs_end_to_end_on_a_local_runner(live_server, transactional_db, alice, job_world, grading_worker,
                                                  tmp_path):
    job = scripted_job(alice, seeds=2, steps=5, sleep=0.6)
    runner = loopback_runner_process(live_server, tmp_path, tasks=2)
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
                          60, "graded", grading_worker)
        wait_until(lambda: not Snapshot.objects.filter(run__in=runs, status__in=("pending", "grading")).exists(),
                   60, "snapshots graded", grading_worker)
        assert runner.wait(30) == 0, runner.output()
    finally:
        RemoteRunner.stop_all()
    assert {t.status for t in job.tasks.all()} == {JobTask.Status.SUCCEEDED}
    for run in runs:
        assert run.origin == Run.Origin.JOB and run.score == pytest.approx(1.0) and run.gold_medal
        assert run.trajectory.n_steps == 5
        snapshots = list(run.snapshots.order_by("elapsed_seconds"))
        assert snapshots and all(s.status == "graded" for s in snapshots)
        assert snapshots[-1].score == pytest.approx(1.0) and snapshots[0].score < 1.0
    assert set(Run.objects.for_leaderboard().filter(experiment=job.experiment)) == set(runs)
    assert job.status == "succeeded"


def test_submit_job_waits_and_prints_one_line_per_task(live_server, transactional_db, alice, job_world,
                                                       grading_worker, tmp_path, settings):
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

    runner = loopback_runner_process(live_server, tmp_path, tasks=2)
    thread = threading.Thread(target=submit)
    try:
        thread.start()
        assert done.wait(120), runner.output() + grading_worker.output()
    finally:
        RemoteRunner.stop_all()
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["competition"], r["seed"], r["status"], r["valid_submission"], r["any_medal"]) for r in rows] == [
        ("spaceship-titanic", 0, "succeeded", True, True), ("spaceship-titanic", 1, "succeeded", True, True)]
    assert all(r["score"] == pytest.approx(1.0) and Run.objects.filter(pk=r["run"]).exists() for r in rows)
    assert list(rows[0]) == ["job", "competition", "seed", "status", "run", "score", "valid_submission", "any_medal",
                             "run_status", "grading_error", "state"]
    assert all(r["run_status"] == "graded" and r["grading_error"] is None and r["state"] == "graded" for r in rows)

"""The whole product path with no services: a job submitted through the REST API, a real runner
process (Celery on the embedded broker; Redis in CI) running the built-in baseline agent with the
local backend, its trajectory streamed while it works, its snapshots and final submission graded,
and the run on the leaderboard's smoke split."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from leaderboard.models import Run, Snapshot
from runner.models import JobTask
from tests.job_support import WorkerProcess, needs_agent_tools, wait_until

pytestmark = needs_agent_tools


def test_api_job_with_the_baseline_agent_ends_on_the_leaderboard(transactional_db, staff, job_world, tmp_path):
    call_command("make_smoke_competitions", "--root", str(tmp_path / "smoke"), stdout=io.StringIO())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff).key}")
    response = client.post("/api/jobs/", {"agent": "baseline", "competitions": ["smoke-wine"], "seeds": 1,
                                          "time_limit_minutes": 0.75}, format="json")
    assert response.status_code == 201, response.content
    job_id = response.json()["id"]

    runner = WorkerProcess(tmp_path / "runner.log", "jobs.cpu,celery", runner=job_world.name)
    try:
        live = wait_until(lambda: Run.objects.filter(job_task__job_id=job_id, status=Run.Status.RUNNING,
                                                     n_steps__gte=1).first(), 90, "streaming", runner)
        seen = {live.n_steps}
        while JobTask.objects.filter(pk=live.job_task.pk, status=JobTask.Status.RUNNING).exists():
            seen.add(Run.objects.get(pk=live.pk).n_steps)
        task = wait_until(lambda: JobTask.objects.filter(job_id=job_id, status__in=JobTask.FINISHED).first(), 120,
                          "finished", runner)
        run = wait_until(lambda: Run.objects.filter(pk=task.run_id, status__in=("graded", "failed")).first(), 60,
                         "graded", runner)
        wait_until(lambda: not Snapshot.objects.filter(run=run, status__in=("pending", "grading")).exists(), 60,
                   "snapshots graded", runner)
    finally:
        runner.stop()
    assert len(seen) >= 2, seen  # steps arrived while the agent worked, not all at the end
    assert task.status in (JobTask.Status.SUCCEEDED, JobTask.Status.TIMED_OUT), task.error
    assert run.status == Run.Status.GRADED and run.valid_submission, run.grading_error
    assert run.origin == Run.Origin.JOB and run.verification == Run.Verification.VERIFIED
    snapshots = list(run.snapshots.all())
    assert snapshots and all(s.status == "graded" and s.valid_submission for s in snapshots)

    body = client.get(f"/api/jobs/{job_id}/").json()
    assert body["status"] in ("succeeded", "failed") and body["tasks"][0]["run"] == run.pk
    assert body["tasks"][0]["score"] == pytest.approx(run.score)
    rows = client.get("/api/leaderboard/?split=smoke&pad=true").json()["results"]
    assert [r["experiment_id"] for r in rows] == [run.experiment_id]

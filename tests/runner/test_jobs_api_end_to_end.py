"""The whole product path with no services: a job submitted through the REST API, a loopback runner
process (`manage.py runner --site URL` with a token, as `make run` starts it) running the built-in
baseline agent with the local backend, its trajectory streamed while it works, its snapshots and final
submission graded by the site's grading worker (Celery on the embedded broker; Redis in CI), and the
run on the leaderboard's smoke split. It is also the end-to-end test of the built-in baseline on unseen
data (scikit-learn's wine as an MLE-bench competition) with a real runner: its trajectory has plans and
code."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from leaderboard.models import Run, Snapshot
from runner.models import JobTask
from tests.job_support import needs_agent_tools, wait_until
from tests.remote_runner_support import RemoteRunner, new_token

pytestmark = [needs_agent_tools, pytest.mark.serial]


def test_api_job_with_the_baseline_agent_ends_on_the_leaderboard(live_server, transactional_db, staff, job_world,
                                                                 grading_worker, tmp_path):
    call_command("make_smoke_competitions", "--root", str(tmp_path / "smoke"), stdout=io.StringIO())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff).key}")
    response = client.post("/api/jobs/", {"agent": "baseline", "competitions": ["smoke-wine"], "seeds": 1,
                                          "time_limit_minutes": 0.75}, format="json")
    assert response.status_code == 201, response.content
    job_id = response.json()["id"]

    runner = RemoteRunner(live_server.url, new_token("loopback-api"), tmp_path / "loopback", "--tasks", "1")
    try:
        live = wait_until(lambda: Run.objects.filter(job_task__job_id=job_id, status=Run.Status.RUNNING,
                                                     n_steps__gte=1).first(), 90, "streaming", runner)
        seen = {live.n_steps}
        while JobTask.objects.filter(pk=live.job_task.pk, status=JobTask.Status.RUNNING).exists():
            seen.add(Run.objects.get(pk=live.pk).n_steps)
        task = wait_until(lambda: JobTask.objects.filter(job_id=job_id, status__in=JobTask.FINISHED).first(), 120,
                          "finished", runner)
        run = wait_until(lambda: Run.objects.filter(pk=task.run_id, status__in=("graded", "failed")).first(), 60,
                         "graded", grading_worker)
        wait_until(lambda: not Snapshot.objects.filter(run=run, status__in=("pending", "grading")).exists(), 60,
                   "snapshots graded", grading_worker)
    finally:
        RemoteRunner.stop_all()
    assert len(seen) >= 2, seen  # steps arrived while the agent worked, not all at the end
    assert task.status in (JobTask.Status.SUCCEEDED, JobTask.Status.TIMED_OUT), task.error
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None, run.grading_error
    assert run.trajectory.n_steps >= 3 and {"plan", "code"} <= set(run.trajectory.kind_counts)
    assert run.origin == Run.Origin.JOB and run.verification == Run.Verification.VERIFIED
    snapshots = list(run.snapshots.all())
    assert snapshots and all(s.status == "graded" and s.valid_submission for s in snapshots)

    body = client.get(f"/api/jobs/{job_id}/").json()
    assert body["status"] in ("succeeded", "failed") and body["tasks"][0]["run"] == run.pk
    assert body["tasks"][0]["score"] == pytest.approx(run.score)
    rows = client.get("/api/leaderboard/?split=smoke&pad=true").json()["results"]
    assert [r["experiment_id"] for r in rows] == [run.experiment_id]

"""A job whose run could not be graded says why: in job_summary (submit_job --wait's lines), in the
API and on the job page, never "succeeded" with a bare null score."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from rest_framework.test import APIClient

from leaderboard.grading import grade_submission
from leaderboard.models import Run
from leaderboard.runs.outcome import store_report
from runner.jobs.services import create_job, job_summary
from runner.management.commands import submit_job
from runner.models import JobTask
from tests.competitions.test_custom_competitions import imported, make_competition

pytestmark = pytest.mark.django_db


@pytest.fixture
def ungradable_task(tmp_path, staff, django_capture_on_commit_callbacks):
    """A succeeded task of a job on a custom competition whose config names a metric nobody computes;
    its run was graded for real, and grading could not score it."""
    answers = pd.DataFrame({"id": [1, 2], "y": [0, 1]})
    make_competition(tmp_path, "odd-metric", "my-secret-sauce", answers, answers,
                     grader={"name": "my-secret-sauce", "grade_fn": "mlebench.competitions.odd-metric.grade:grade"})
    competition = imported(tmp_path, "odd-metric")
    with django_capture_on_commit_callbacks(execute=False):
        job = create_job(user=staff, agent="baseline", competitions=["odd-metric"], time_limit_minutes=5)
    task = job.tasks.get()
    run = Run.objects.create(experiment=job.experiment, competition=competition, status=Run.Status.GRADING)
    answers.to_csv(tmp_path / "submission.csv", index=False)
    store_report(run, grade_submission(competition, tmp_path / "submission.csv"))
    JobTask.objects.filter(pk=task.pk).update(run=run, status=JobTask.Status.SUCCEEDED)
    return JobTask.objects.get(pk=task.pk)


def test_summary_row_says_why_the_run_has_no_score(ungradable_task):
    summary = job_summary(ungradable_task.job)
    row = summary["tasks"][0]
    assert row["status"] == "succeeded" and row["score"] is None and row["run_status"] == "failed"
    assert "no grader is defined for its metric 'my-secret-sauce'" in row["grading_error"]
    assert summary["not_scored"] == 1


def test_submit_job_wait_prints_the_reason(ungradable_task):
    rows = submit_job.wait_for(ungradable_task.job, poll_seconds=0.01)
    line = json.loads(json.dumps(rows[0]))
    assert "no grader" in line["grading_error"]


def test_api_and_job_page_say_why(ungradable_task, staff, client):
    api = APIClient()
    api.force_authenticate(staff)
    body = api.get(f"/api/jobs/{ungradable_task.job_id}/").json()
    assert "no grader" in body["tasks"][0]["grading_error"]
    client.force_login(staff)
    page = client.get(f"/jobs/{ungradable_task.job_id}/").content.decode()
    assert "not scored: failed: grading is not available for odd-metric" in page


def test_a_scored_run_has_no_grading_error(ungradable_task):
    run = ungradable_task.run
    Run.objects.filter(pk=run.pk).update(status=Run.Status.GRADED, score=0.5, valid_submission=True, grading_error="")
    assert job_summary(ungradable_task.job)["tasks"][0]["grading_error"] is None


def test_a_run_waiting_for_answers_ends_the_wait_and_says_so(ungradable_task):
    run = ungradable_task.run
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.WAITING, grading_error="waiting for answers: this site has no answers registered yet")
    rows = submit_job.wait_for(ungradable_task.job, poll_seconds=0.01)  # returns: nothing more will happen
    assert rows[0]["grading_error"] == "waiting for answers: this site has no answers registered yet"


def test_the_job_list_says_how_many_runs_were_not_scored(ungradable_task, staff, client):
    client.force_login(staff)
    row = client.get("/jobs/").content.decode().split(f'href="/jobs/{ungradable_task.job_id}/"')[1].split("</tr>")[0]
    assert "finished, 1 of 1 run not scored" in row and "<td class=\"num\">5 min</td>" in row  # the limit in words
    assert ">succeeded<" not in row  # never plain "succeeded" with a run not scored
    Run.objects.filter(pk=ungradable_task.run_id).update(status=Run.Status.GRADED, score=0.5, valid_submission=True,
                                                          grading_error="")
    row = client.get("/jobs/").content.decode().split(f'href="/jobs/{ungradable_task.job_id}/"')[1].split("</tr>")[0]
    assert "not scored" not in row
    assert "<dt>Time limit</dt><dd>5 min</dd>" in client.get(f"/jobs/{ungradable_task.job_id}/").content.decode()

"""A job walked through every state its one task and run can be in: the job page, the job list, the
API and submit_job's rows all say the same status and the same words (runner.jobs.states), a job never
"fails" because an agent that left a scored submission timed out, a job with a run not scored never says
plain "succeeded", and the Cancel button is there exactly while the job can be cancelled."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from rest_framework.test import APIClient

from leaderboard.models import Run
from runner.jobs.services import create_job, job_summary
from runner.management.commands import submit_job
from runner.models import JobTask
from tests.runner import test_jobs_web

competition = test_jobs_web.competition  # the fixture: spaceship-titanic with public data

GOLD = {"status": Run.Status.GRADED, "score": 0.99, "submission_exists": True, "valid_submission": True,
        "gold_medal": True, "any_medal": True, "grading_error": ""}
INVALID = {"status": Run.Status.GRADED, "score": None, "submission_exists": True, "valid_submission": False,
           "grading_error": "missing column(s) 'Transported'"}
NO_FILE = {"status": Run.Status.GRADED, "score": None, "submission_exists": False, "valid_submission": False,
           "grading_error": ""}

# (task status, run fields or None) -> (job status, job words, task words, cancel button shown)
WALK = [
    ("queued", None, "queued", "queued", "queued", True),
    ("running", {"status": Run.Status.RUNNING}, "running", "running", "running", True),
    ("grading", {"status": Run.Status.GRADING}, "running", "running", "grading", True),
    ("succeeded", GOLD, "succeeded", "succeeded", "graded", False),
    ("timed_out", GOLD, "succeeded", "succeeded", "timed out, submission graded", False),
    ("failed", GOLD, "succeeded", "succeeded", "agent failed, submission graded", False),
    ("succeeded", INVALID, "succeeded", "finished, 1 of 1 run not scored", "succeeded, not scored", False),
    ("succeeded", NO_FILE, "succeeded", "finished, 1 of 1 run not scored", "succeeded, not scored", False),
    ("timed_out", NO_FILE, "failed", "failed, 1 of 1 run not scored", "timed out, not scored", False),
    ("failed", INVALID, "failed", "failed, 1 of 1 run not scored", "agent failed, not scored", False),
    ("cancelled", {"status": Run.Status.FAILED, "grading_error": "cancelled by its job"}, "cancelled", "cancelled",
     "cancelled", False),
]


@pytest.fixture
def job(staff, competition, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        return create_job(user=staff, agent="baseline", competitions=["spaceship-titanic"], time_limit_minutes=5)


def put(job, task_status: str, run_fields: dict | None) -> None:
    task = job.tasks.get()
    run = task.run
    if run_fields is not None and run is None:
        run = Run.objects.create(experiment=job.experiment, competition=task.competition, origin=Run.Origin.JOB,
                                 verification=Run.Verification.VERIFIED, status=Run.Status.RUNNING)
    if run is not None:
        Run.objects.filter(pk=run.pk).update(**{**GOLD, "gold_medal": False, "any_medal": False, "score": None,
                                                 **(run_fields or {})})
    JobTask.objects.filter(pk=task.pk).update(status=task_status, run=run)


def page_says(client, job) -> tuple[str, str, str, bool]:
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    badge = re.search(r'<span class="status (\w+)" id="job-status">([^<]*)</span>', page)
    task_words = re.search(r'<td data-field="status"><span class="status \w+">([^<]*)</span>', page).group(1)
    return badge.group(1), html_lib.unescape(badge.group(2)), html_lib.unescape(task_words), 'id="cancel-job"' in page


def list_says(client, job) -> str:
    row = client.get("/jobs/").content.decode().split(f'href="/jobs/{job.pk}/"')[1].split("</tr>")[0]
    return html_lib.unescape(re.search(r'<span class="status \w+">([^<]*)</span>', row).group(1))


@pytest.mark.parametrize(("task_status", "run_fields", "status", "words", "task_words", "cancellable"), WALK)
def test_every_state_is_said_the_same_everywhere(job, staff, client, task_status, run_fields, status, words,
                                                 task_words, cancellable):
    put(job, task_status, run_fields)
    client.force_login(staff)
    assert page_says(client, job) == (status, words, task_words, cancellable)
    assert list_says(client, job) == words
    api = APIClient()
    api.force_authenticate(staff)
    body = api.get(f"/api/jobs/{job.pk}/").json()
    assert (body["status"], body["state"], body["tasks"][0]["state"]) == (status, words, task_words)
    summary = job_summary(job)
    assert (summary["status"], summary["state"], summary["tasks"][0]["state"]) == (status, words, task_words)
    job.refresh_from_db()
    assert (job.status, job.state) == (status, words)


def test_submit_job_wait_gives_each_runs_state_and_reason(job):
    put(job, "failed", INVALID)
    rows = submit_job.wait_for(job, poll_seconds=0.01)
    assert rows[0]["state"] == "agent failed, not scored"
    assert rows[0]["grading_error"] == "invalid submission: missing column(s) 'Transported'"


def test_a_job_whose_agent_timed_out_with_a_gold_submission_did_not_fail(job, staff, client):
    """The report: a job "failed" whose only run got gold."""
    put(job, "timed_out", GOLD)
    client.force_login(staff)
    status, words, task_words, _ = page_says(client, job)
    assert status == "succeeded" and "failed" not in words and task_words == "timed out, submission graded"
    assert ">gold<" in client.get(f"/jobs/{job.pk}/").content.decode()

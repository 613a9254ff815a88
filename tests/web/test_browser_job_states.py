"""The job pages in a browser, one job in each state of runner.jobs.states: the crawl from the job list is
clean (no console or HTTP error, no cut table), each job page says the same words before and after its
script polled the API, and a job page open while the job ends loses its Cancel button."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.db import transaction

from runner.jobs.services import create_job
from runner.models import JobTask
from tests.runner import test_jobs_web
from tests.runner.test_job_states import GOLD, WALK, put
from tests.web.test_browser_site_crawl import LAYOUT, crawl

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

competition = test_jobs_web.competition  # the fixture: spaceship-titanic with public data


def new_job(staff, capture):
    with capture(execute=False), transaction.atomic():  # nothing is published to a worker
        return create_job(user=staff, agent="baseline", competitions=["spaceship-titanic"], time_limit_minutes=5)


def sign_in(page, client, user) -> None:
    client.force_login(user)
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                               "url": page.base_url}])


def test_every_job_state_crawls_clean_and_says_the_same_after_polling(
        page, staff, client, competition, django_capture_on_commit_callbacks):
    jobs = []
    for task_status, run_fields, status, words, task_words, cancellable in WALK:
        job = new_job(staff, django_capture_on_commit_callbacks)
        put(job, task_status, run_fields)
        jobs.append((job, status, words, task_words, cancellable))
    sign_in(page, client, staff)
    seen, findings = crawl(page, ["/jobs/", *(f"/jobs/{job.pk}/" for job, *_ in jobs)], 30)
    assert "/jobs/" in {urlsplit(url).path for url in seen}
    assert not findings, "\n".join(findings)  # the crawl takes three pages of a kind: each job is seen below
    for job, status, words, task_words, cancellable in jobs:
        page.goto(f"{page.base_url}/jobs/{job.pk}/")
        page.wait_for_timeout(1500)  # the page's script has polled /api/jobs/<id>/ once and rewritten the row
        badge = page.locator("#job-status")
        assert (badge.inner_text(), badge.get_attribute("class")) == (words, f"status {status}"), job.pk
        assert page.locator("#tasks [data-field=status] .status").inner_text() == task_words, job.pk
        assert (page.locator("#cancel-job").count() == 1) == cancellable, job.pk
        assert page.evaluate(LAYOUT) == [], job.pk
    assert not page.js_errors


def test_the_cancel_button_goes_when_the_job_ends_under_an_open_page(
        page, staff, client, competition, django_capture_on_commit_callbacks):
    job = new_job(staff, django_capture_on_commit_callbacks)
    put(job, JobTask.Status.RUNNING, {"status": "running"})
    sign_in(page, client, staff)
    page.goto(f"{page.base_url}/jobs/{job.pk}/")
    assert page.locator("#cancel-job").is_visible()
    put(job, JobTask.Status.TIMED_OUT, GOLD)  # ends while the page is open: a gold submission, out of time
    page.locator("#cancel-job").wait_for(state="detached", timeout=10_000)
    assert page.locator("#job-status").inner_text() == "succeeded"
    assert page.locator("#tasks [data-field=status] .status").inner_text() == "timed out, submission graded"
    assert page.locator("#tasks [data-field=medal]").inner_text() == "gold"
    assert page.locator("#live-note").inner_text() == "The job has finished."

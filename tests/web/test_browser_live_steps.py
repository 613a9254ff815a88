"""A run page open while its agent works counts steps once: the live line, the run's facts and the
player's "step i / n" follow the same count, and "so far" goes when the run has ended."""

from __future__ import annotations

import pytest

from runner.models import JobTask
from tests.runner import test_jobs_web
from tests.runner.test_job_states import GOLD, put
from tests.web.test_browser_job_states import new_job, sign_in
from tests.web.test_replay_page import add_steps

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

competition = test_jobs_web.competition  # the fixture: spaceship-titanic with public data


def steps(n: int) -> list[dict]:
    return [{"kind": "message", "title": f"step {i}", "text": "working"} for i in range(n)]


def test_the_step_counts_agree_while_the_run_grows_and_after_it_ends(
        page, staff, client, competition, django_capture_on_commit_callbacks):
    job = new_job(staff, django_capture_on_commit_callbacks)
    put(job, JobTask.Status.RUNNING, {"status": "running"})
    run = job.tasks.get().run
    add_steps(run, steps(3))
    sign_in(page, client, staff)
    page.goto(f"{page.base_url}/runs/{run.pk}/")
    assert page.locator("#run-steps").inner_text() == "3" and page.locator("#live-steps").inner_text() == "3"
    assert page.locator("#position").inner_text().endswith(" / 3")
    assert page.locator("#live-steps-so-far").text_content().strip() == "so far"
    add_steps(run, steps(17))
    page.wait_for_function("document.getElementById('live-steps').textContent === '17'", timeout=10_000)
    assert page.locator("#run-steps").inner_text() == "17"
    assert page.locator("#position").inner_text().endswith("/ 17")
    add_steps(run, steps(36))  # the stored trajectory, with the gateway's calls, replaces the live one
    put(job, JobTask.Status.SUCCEEDED, GOLD)
    page.wait_for_function("document.getElementById('live').dataset.done === 'true'", timeout=10_000)
    assert page.locator("#live-steps").inner_text() == page.locator("#run-steps").inner_text() == "36"
    assert page.locator("#live-steps-so-far").inner_text() == ""
    assert page.locator("#live-status").inner_text() == "graded"
    assert page.locator("#position").inner_text().endswith("/ 36")
    assert not page.js_errors

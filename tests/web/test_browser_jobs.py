"""A job in a real browser: submit it from /jobs/new/, follow it to its run, watch the run page fill
in live (steps, elapsed time, output), and end on a graded run with its medal."""

from __future__ import annotations

import re

import pytest

from leaderboard.models import Run
from runner.models import Job, JobTask
from tests.job_support import WorkerProcess
from tests.remote_runner_support import RemoteRunner, new_token

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def runner_worker(job_world, live_server, tmp_path):
    """The site's grading worker (a real Celery worker process) and a loopback runner process beside it
    (`manage.py runner --site` with a token, as `make run` starts it), which takes the job's task."""
    from webapp.celery import app

    app.conf.task_always_eager = False
    app.control.purge()
    worker = WorkerProcess(tmp_path / "worker.log", "celery")
    RemoteRunner(live_server.url, new_token("loopback-browser"), tmp_path / "loopback")
    yield worker
    RemoteRunner.stop_all()
    worker.stop()


def test_submit_a_job_and_watch_its_run_live(page, runner_worker, django_user_model):
    django_user_model.objects.create_user("ops", "ops@example.org", "ops-password-1", is_staff=True)
    page.goto(page.base_url + "/jobs/new/")
    page.fill("#id_username", "ops")
    page.fill("#id_password", "ops-password-1")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/new/")

    page.select_option("#id_agent", "scripted")
    page.select_option("#id_competitions", ["spaceship-titanic"])
    page.fill("#id_time_limit_minutes", "1")
    page.click("#job-submit")
    page.wait_for_url(re.compile(r".*/jobs/\d+/$"))
    job = Job.objects.get()
    assert job.agent.name == "scripted"

    run_link = page.locator("#tasks [data-field=run] a")  # the job page polls until the run exists
    try:
        run_link.wait_for(timeout=30_000)
    except Exception:
        raise AssertionError("no run appeared; worker log:\n" + runner_worker.output()) from None
    run_link.click()
    page.wait_for_url(re.compile(r".*/runs/\d+/$"))

    page.locator("#live").wait_for()
    page.wait_for_function("Number(document.getElementById('live-steps').textContent) > 0", timeout=30_000)
    page.locator("#pages article.step").first.wait_for(timeout=30_000)  # steps appended while it runs
    page.wait_for_function("document.getElementById('live').dataset.done === 'true'", timeout=60_000)

    task = JobTask.objects.select_related("run").get(job=job)
    run = task.run
    assert task.status == JobTask.Status.SUCCEEDED and run.status == Run.Status.GRADED
    assert page.locator("#live-status").inner_text().strip() == task.state == "graded"  # runner.jobs.states' words
    assert page.locator("#run-steps").inner_text() == str(run.trajectory.n_steps)  # the facts follow the live count
    assert page.locator("#live-steps-so-far").inner_text() == ""  # no "so far" once the run ended
    assert page.locator("#pages article.step").count() == run.trajectory.n_steps
    assert "step 3" in page.locator("#live-log").text_content()  # the agent's own output, tail shown
    page.reload()
    assert page.locator(".medal").first.inner_text().strip() == run.medals().label
    assert page.js_errors == []

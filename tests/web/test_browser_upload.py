"""The upload form in a real browser: log in, upload, watch it grade, land on the run with its medal."""

from __future__ import annotations

import re

import pytest

from leaderboard.models import Run
from tests.queue_support import record_sends
from tests.runs.test_submission import answers_for, submission
from webapp import queue

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in_to_upload(page, username: str = "alice", password: str = "alice-password-1") -> None:
    """Open the upload form, which asks to log in first, and log in."""
    page.goto(page.base_url + "/runs/upload/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url("**/runs/upload/")


@pytest.fixture
def eager_grading(settings):
    from webapp.celery import app

    settings.CELERY_TASK_ALWAYS_EAGER = True
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


def test_upload_a_run_and_see_its_medal(page, catalogue, tmp_path, django_user_model, eager_grading):
    answers_for(tmp_path, catalogue)
    django_user_model.objects.create_user("alice", "alice@example.org", "alice-password-1")
    csv_path = tmp_path / "submission.csv"
    csv_path.write_bytes(submission().read())

    log_in_to_upload(page)

    page.fill("#competition-filter", "spaceship")
    assert page.input_value("#id_competition") == "spaceship-titanic"  # the filter picked the match
    page.fill("#id_agent", "aide")
    page.fill("#id_model", "gpt-4o")
    page.fill("#id_time_limit_hours", "24")
    page.set_input_files("#id_submission", str(csv_path))
    page.click("#upload-submit")

    page.wait_for_url(re.compile(r".*/runs/\d+/progress/$"))
    page.wait_for_url(re.compile(r".*/runs/\d+/$"), timeout=20_000)  # polled until graded, then the run page
    run = Run.objects.get(owner__username="alice")
    assert page.url.endswith(f"/runs/{run.pk}/")
    assert page.locator(".medal.gold").first.inner_text().strip() == "gold"
    assert run.status == Run.Status.GRADED and run.gold_medal
    assert page.js_errors == []


def test_the_page_follows_an_upload_the_worker_imports(page, catalogue, tmp_path, django_user_model, eager_grading,
                                                       settings, monkeypatch):
    """A slow worker: the form lands on the intake's page, which follows it to the run once imported."""
    from leaderboard.models import RunIntake
    from leaderboard.runs import intake

    settings.INTAKE_IN_REQUEST, settings.INTAKE_WAIT_S = False, 0
    answers_for(tmp_path, catalogue)
    django_user_model.objects.create_user("alice", "alice@example.org", "alice-password-1")
    csv_path = tmp_path / "submission.csv"
    csv_path.write_bytes(submission().read())
    log_in_to_upload(page)
    page.select_option("#id_competition", "spaceship-titanic")
    page.fill("#id_agent", "aide")
    page.fill("#id_model", "gpt-4o")
    page.set_input_files("#id_submission", str(csv_path))
    record_sends(monkeypatch, queue.IMPORT_INTAKE)  # published to no worker: the test imports it below
    page.click("#upload-submit")
    page.wait_for_url(re.compile(r".*/runs/intakes/\d+/$"))
    monkeypatch.undo()
    assert page.locator("#intake-status").inner_text() == "received, waiting for a worker"
    intake.import_intake.apply(args=(RunIntake.objects.get().pk,))
    page.wait_for_url(re.compile(r".*/runs/\d+/$"), timeout=20_000)  # imported, graded, then the run page
    assert page.url.endswith(f"/runs/{Run.objects.get(owner__username='alice').pk}/")
    assert page.js_errors == []

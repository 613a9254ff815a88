"""The upload-a-run form, its progress page and the status endpoint it polls."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard.models import Artifact, Run
from tests.runs.test_submission import answers_for, submission

URL = "/runs/upload/"


def form_data(**overrides):
    data = {"competition": "spaceship-titanic", "agent": "aide", "agent_version": "0.2", "model": "gpt-4o",
            "seed": "0", "hardware": "", "gpu_type": "A10", "gpu_count": "1", "time_limit_hours": "24",
            "notes": "first try",
            "submission": SimpleUploadedFile("submission.csv", submission().read(), content_type="text/csv")}
    data.update(overrides)
    return data


def test_anonymous_users_are_sent_to_log_in(client, catalogue):
    response = client.get(URL)
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_the_form_offers_every_competition(client, alice, catalogue):
    client.force_login(alice)
    response = client.get(URL)
    assert response.status_code == 200
    assert response.content.count(b"<option value=") >= catalogue.count()
    assert b'id="competition-filter"' in response.content and b"js/upload.js" in response.content


def test_uploading_creates_an_owned_pending_run_and_lands_on_its_progress_page(client, alice, catalogue):
    client.force_login(alice)
    response = client.post(URL, form_data(trajectory_files=[
        SimpleUploadedFile("notes.txt", b"not a trajectory"), SimpleUploadedFile("more.log", b"log line"),
    ]))
    run = Run.objects.get(owner=alice)
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/progress/"
    assert run.status == Run.Status.PENDING and run.competition.slug == "spaceship-titanic"
    assert run.experiment.hardware == "1x A10" and run.experiment.time_limit_hours == 24
    assert run.notes == "first try" and run.origin == Run.Origin.UPLOAD
    assert set(run.artifacts.values_list("kind", flat=True)) == {Artifact.Kind.SUBMISSION, Artifact.Kind.TRAJECTORY}
    page = client.get(response["Location"])
    assert f'data-status-url="/runs/{run.pk}/status.json"'.encode() in page.content


def test_nothing_to_upload_is_a_form_error(client, alice, catalogue):
    client.force_login(alice)
    data = form_data()
    del data["submission"]
    response = client.post(URL, data)
    assert response.status_code == 200 and b"Upload a submission, a trajectory, or both." in response.content
    assert not Run.objects.exists()


def test_a_submission_needs_a_catalogue_competition(client, alice, catalogue):
    client.force_login(alice)
    data = form_data()
    data.pop("competition")
    data["task"] = "my-own-task"
    response = client.post(URL, data)
    assert b"A submission is graded against a competition: choose one." in response.content
    assert not Run.objects.exists()


def test_a_trajectory_for_a_task_outside_the_catalogue(client, alice, catalogue):
    from tests.runs.test_submission import TRAJECTORIES

    client.force_login(alice)
    data = form_data()
    data.pop("competition")
    data.pop("submission")
    data["task"] = "house-prices"
    data["trajectory_files"] = SimpleUploadedFile(
        "journal.json", (TRAJECTORIES / "aide" / "translucent-spaniel_journal.json").read_bytes())
    response = client.post(URL, data)
    run = Run.objects.get()
    assert response.status_code == 302
    assert run.competition is None and run.task_name == "house-prices"
    assert run.trajectory_format == "aide" and run.n_steps > 0


def test_a_refused_upload_explains_why(client, alice, catalogue, settings):
    settings.MAX_UPLOAD_BYTES = 10
    client.force_login(alice)
    response = client.post(URL, form_data())
    assert response.status_code == 200 and b"10-byte limit" in response.content
    assert not Run.objects.exists()


def test_a_broken_file_is_refused_with_the_reason_and_leaves_no_run(client, alice, catalogue, tmp_path):
    """On a one-user site, a file that does not match used to become a run saying "invalid submission"
    (and a day's grading); the form now says why and keeps nothing, quota included."""
    from leaderboard.models import RunIntake
    from leaderboard.runs.quotas import grading_quota

    answers_for(tmp_path, catalogue)
    client.force_login(alice)
    broken = SimpleUploadedFile("submission.csv", b"PassengerId,label\n0013_01,True\n")
    response = client.post(URL, form_data(submission=broken))
    page = response.content.decode()
    assert response.status_code == 200
    assert "Not saved: invalid submission: missing column(s) &#x27;Transported&#x27;" in page
    assert "the file&#x27;s columns: &#x27;PassengerId&#x27;, &#x27;label&#x27;" in page
    assert not Run.objects.exists() and not RunIntake.objects.exists()
    assert grading_quota(user=alice, competition=catalogue.get(slug="spaceship-titanic")).used == 0
    with_log = form_data(submission=SimpleUploadedFile("submission.csv", b"PassengerId,label\n0013_01,True\n"),
                         trajectory_files=[SimpleUploadedFile("agent.log", b"tried hard")])
    assert client.post(URL, with_log).status_code == 302  # the trajectory is worth keeping: the run is saved
    assert Run.objects.count() == 1
    assert client.post(URL, form_data(seed="1")).status_code == 302  # a good file goes on as before


@pytest.fixture
def eager(settings):
    from webapp.celery import app

    settings.CELERY_TASK_ALWAYS_EAGER = True
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


def test_status_endpoint_reports_the_medal_once_graded(
    client, alice, bob, catalogue, tmp_path, eager, django_capture_on_commit_callbacks
):
    answers_for(tmp_path, catalogue)
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(URL, form_data(is_private="on"))
    run = Run.objects.get(owner=alice)
    status = client.get(f"/runs/{run.pk}/status.json").json()
    assert status["done"] and status["status"] == "graded" and status["medal"] == "gold"
    assert status["url"] == reverse("run-detail", args=[run.pk])
    client.force_login(bob)
    assert client.get(f"/runs/{run.pk}/status.json").status_code == 404  # private: owner and staff only

"""Scores are an oracle: a daily grading quota per user and competition, a format check that needs no
quota and reveals no score, and API throttling."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Run
from tests.api.test_runs import payload, token_client
from tests.runs.test_submission import answers_for, submission, submit


@pytest.fixture
def quota_of_two(settings):
    settings.DAILY_GRADING_QUOTA = 2


def _upload(client, **fields):
    return client.post("/api/runs/", payload(**fields), format="multipart")


def test_graded_uploads_past_the_daily_quota_are_refused_with_when_it_resets(alice, bob, catalogue, quota_of_two):
    client = token_client(alice)
    first = _upload(client, seed=0)
    assert first.status_code == 201 and first.json()["grading_quota"]["remaining"] == 1
    assert _upload(client, seed=1).json()["grading_quota"]["remaining"] == 0
    refused = _upload(client, seed=2)
    assert refused.status_code == 429 and "2 gradings" in refused.json()["detail"]
    assert "UTC" in refused.json()["detail"] and Run.objects.count() == 2
    assert _upload(client, seed=0).status_code == 200  # an identical repeat grades nothing new
    assert _upload(token_client(bob), seed=2).status_code == 201  # per user
    other = _upload(client, seed=2, competition="aerial-cactus-identification",
                    submission=SimpleUploadedFile("submission.csv", b"id,has_cactus\na.jpg,1\n"))
    assert other.status_code == 201  # per competition


def test_runner_jobs_and_self_reported_scores_do_not_count(alice, catalogue, quota_of_two):
    submit(alice, seed=0)
    submit(alice, seed=1)
    job_run = submit(alice, seed=2, origin=Run.Origin.JOB)
    assert job_run.pk
    claim = payload(score=0.5, seed=3)
    del claim["submission"]
    assert token_client(alice).post("/api/runs/", claim, format="multipart").status_code == 201


def test_the_remaining_count_is_in_the_api_and_on_the_form(client, alice, catalogue, quota_of_two):
    submit(alice, seed=0)
    quota = token_client(alice).get("/api/quota/?competition=spaceship-titanic").json()
    assert quota["limit"] == 2 and quota["used"] == 1 and quota["remaining"] == 1
    assert token_client(alice).get("/api/quota/?competition=nope").status_code == 400
    client.force_login(alice)
    page = client.get("/runs/upload/").content.decode()
    assert "2 graded uploads per competition per day" in page and "spaceship-titanic: 1 left today" in page


def test_checking_the_format_needs_no_quota_and_reveals_no_score(alice, catalogue, tmp_path, settings):
    settings.DAILY_GRADING_QUOTA = 0
    answers_for(tmp_path, catalogue)
    client = token_client(alice)
    good = client.post("/api/runs/check/", {"competition": "spaceship-titanic", "submission": SimpleUploadedFile(
        "submission.csv", submission(correct=17).read())}, format="multipart")
    assert good.status_code == 200 and good.json()["valid_submission"] is True
    assert "score" not in good.json() and "0.425" not in good.content.decode()
    bad = client.post("/api/runs/check/", {"competition": "spaceship-titanic", "submission": SimpleUploadedFile(
        "submission.csv", b"id,label\n1,2\n")}, format="multipart")
    assert bad.status_code == 200 and bad.json()["valid_submission"] is False and "PassengerId" in bad.json()["message"]
    assert not Run.objects.exists()
    assert _upload(client).status_code == 429


def test_the_form_checks_the_format_only(client, alice, catalogue, tmp_path):
    from tests.web.test_upload_form import URL, form_data

    answers_for(tmp_path, catalogue)
    client.force_login(alice)
    response = client.post(URL, form_data(check_only="on"))
    assert response.status_code == 200 and b"expected format" in response.content
    assert not Run.objects.exists()


def test_the_api_is_throttled(alice, catalogue, monkeypatch):
    from django.core.cache import cache
    from rest_framework.throttling import AnonRateThrottle

    cache.clear()
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {**AnonRateThrottle.THROTTLE_RATES, "anon": "3/min"})
    from rest_framework.test import APIClient

    client = APIClient()
    codes = [client.get("/api/competitions/").status_code for _ in range(5)]
    assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
    cache.clear()


def test_a_rejected_file_or_a_failed_grading_uses_no_quota(alice, catalogue, quota_of_two):
    """On a one-user site, five broken files in a row must not lock the competition for the day: they
    revealed no score. A valid file, or one still waiting for its grade, counts."""
    from leaderboard.runs.quotas import check_quota, grading_quota, used_today

    titanic = catalogue.get(slug="spaceship-titanic")
    for seed in range(3):  # each graded before the next arrives, as a worker would
        run = submit(alice, seed=seed)
        outcome = ({"status": Run.Status.FAILED, "grading_error": "grader crashed"} if seed == 2 else
                   {"status": Run.Status.GRADED, "grading_error": "missing column(s) 'Transported'"})
        Run.objects.filter(pk=run.pk).update(valid_submission=False, **outcome)
    assert grading_quota(user=alice, competition=titanic).used == 0
    assert used_today(user=alice) == []
    check_quota(user=alice, competition=titanic)  # nothing used: no refusal
    scored = submit(alice, seed=3)
    Run.objects.filter(pk=scored.pk).update(status=Run.Status.GRADED, valid_submission=True, score=0.4)
    submit(alice, seed=4)  # pending: counts until its grade says otherwise
    assert grading_quota(user=alice, competition=titanic).used == 2
    assert used_today(user=alice) == [("spaceship-titanic", 0)]

"""The format check runs in the web process, so it refuses a submission above
MEDALBOARD_FORMAT_CHECK_MAX_BYTES (413, saying why and what to do instead) before the grader reads a
byte; one under the limit is checked as before."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard import grading
from tests.api.test_runs import token_client
from tests.runs.test_submission import IDS, answers_for

HEADER = b"PassengerId,Transported\n"


def large_submission(size: int) -> bytes:
    """A real-looking spaceship-titanic submission of `size` bytes (its rows repeated)."""
    rows = b"".join(f"{i},True\n".encode() for i in IDS)
    return (HEADER + rows * (size // len(rows) + 1))[:size]


@pytest.fixture
def grader_calls(monkeypatch):
    calls = []
    real = grading.grade_submission
    monkeypatch.setattr(grading, "grade_submission", lambda *a, **kw: calls.append(a) or real(*a, **kw))
    return calls


def test_a_submission_above_the_limit_is_refused_before_the_grader_reads_it(alice, catalogue, grader_calls, settings):
    body = large_submission(settings.FORMAT_CHECK_MAX_BYTES + 1)  # the default limit: 32 MiB
    response = token_client(alice).post("/api/runs/check/", {
        "competition": "spaceship-titanic", "submission": SimpleUploadedFile("submission.csv", body)},
        format="multipart")
    assert response.status_code == 413, response.content[:300]
    assert "MEDALBOARD_FORMAT_CHECK_MAX_BYTES" in response.json()["detail"] and "Upload it" in response.json()["detail"]
    assert grader_calls == []


def test_under_the_limit_the_format_is_checked(alice, catalogue, tmp_path, grader_calls, settings):
    answers_for(tmp_path, catalogue)
    settings.FORMAT_CHECK_MAX_BYTES = 1 << 20
    body = HEADER + b"".join(f"{i},True\n".encode() for i in IDS)
    response = token_client(alice).post("/api/runs/check/", {
        "competition": "spaceship-titanic", "submission": SimpleUploadedFile("submission.csv", body)},
        format="multipart")
    assert response.status_code == 200 and response.json()["valid_submission"] is True and len(grader_calls) == 1


def test_the_upload_forms_check_says_the_same(client, alice, catalogue, grader_calls, settings):
    from tests.web.test_upload_form import URL, form_data

    settings.FORMAT_CHECK_MAX_BYTES = 10_000
    client.force_login(alice)
    data = form_data(check_only="on")
    data["submission"] = SimpleUploadedFile("submission.csv", large_submission(20_000))
    response = client.post(URL, data)
    assert response.status_code == 413 and b"MEDALBOARD_FORMAT_CHECK_MAX_BYTES" in response.content
    assert grader_calls == []

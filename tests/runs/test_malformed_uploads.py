"""Malformed submissions uploaded through the API are stored, graded invalid with a specific reason,
and the site keeps serving."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Run
from tests.api.test_runs import token_client
from tests.runs.test_submission import IDS, answers_for

GOOD_ROWS = "".join(f"{i},True\n" for i in IDS)
CASES = [
    pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not", id="binary"),
    pytest.param(("PassengerId,Transported\n" + GOOD_ROWS).encode("utf-16"), "utf-16", id="utf-16"),
    pytest.param(("id,label\n" + GOOD_ROWS).encode(), "PassengerId", id="wrong-columns"),
    pytest.param(("PassengerId,Transported\n" + GOOD_ROWS + f"{IDS[0]},True\n").encode(), "duplicate",
                 id="duplicate-id"),
    pytest.param(("PassengerId,Transported\n" + "".join(f"{i},True\n" for i in IDS[:-3])).encode(), "missing",
                 id="missing-ids"),
    pytest.param(("PassengerId,Transported\n" + GOOD_ROWS + "9999_99,True\n").encode(), "9999_99",
                 id="unknown-id"),
    pytest.param(b"<script>alert(1)</script>\n" + GOOD_ROWS.encode(), "PassengerId", id="script-header"),
]


def test_empty_upload_is_refused_with_a_reason(alice, catalogue):
    response = token_client(alice).post("/api/runs/", {
        "competition": "spaceship-titanic", "agent": "a", "model": "m",
        "submission": SimpleUploadedFile("submission.csv", b"")}, format="multipart")
    assert response.status_code == 400 and "empty" in response.json()["submission"][0]
    assert not Run.objects.exists()


@pytest.mark.parametrize(("content", "fragment"), CASES)
def test_malformed_upload_is_stored_invalid_with_a_reason(alice, catalogue, tmp_path, settings, client,
                                                          content, fragment):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    answers_for(tmp_path, catalogue)
    from webapp.celery import app

    app.conf.task_always_eager = True
    try:
        response = token_client(alice).post("/api/runs/", {
            "competition": "spaceship-titanic", "agent": "a", "model": "m",
            "submission": SimpleUploadedFile("submission.csv", content)}, format="multipart")
    finally:
        app.conf.task_always_eager = False
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    from leaderboard.runs.outcome import grade_stored_run

    if run.status == Run.Status.PENDING:
        grade_stored_run(run)
        run.refresh_from_db()
    assert run.status == Run.Status.GRADED and not run.valid_submission and run.score is None
    assert fragment.lower() in run.grading_error.lower(), run.grading_error
    assert run.artifacts.filter(kind="submission").exists()  # the file is kept for the uploader to inspect
    page = client.get(f"/runs/{run.pk}/")
    assert page.status_code == 200 and b"<script>alert(1)" not in page.content
    assert client.get("/").status_code == 200

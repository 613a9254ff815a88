"""POST/GET /api/runs/: token auth, explicit serializers, idempotency, privacy, no answers."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from leaderboard.models import Run
from tests.runs.test_submission import answers_for, submission, submit


@pytest.fixture
def api():
    return APIClient()


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def payload(**overrides):
    data = {"competition": "spaceship-titanic", "agent": "aide", "model": "gpt-4o", "seed": 2,
            "submission": SimpleUploadedFile("submission.csv", submission().read())}
    data.update(overrides)
    return data


def test_anonymous_cannot_upload(api, catalogue):
    response = api.post("/api/runs/", payload(), format="multipart")
    assert response.status_code == 401
    assert not Run.objects.exists()


def test_upload_with_a_token_creates_a_run_and_is_idempotent(alice, catalogue, tmp_path):
    answers = answers_for(tmp_path, catalogue)
    client = token_client(alice)
    first = client.post("/api/runs/", payload(), format="multipart")
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["status"] == "pending" and body["owner"] == "alice" and body["competition"] == "spaceship-titanic"
    assert body["experiment"]["agent"] == "aide" and body["seed"] == 2
    assert "grading_report" not in body and str(answers) not in first.content.decode()
    again = client.post("/api/runs/", payload(), format="multipart")
    assert again.status_code == 200 and again.json()["id"] == body["id"]
    assert Run.objects.count() == 1


def test_bad_input_is_a_400_with_a_reason(alice, catalogue, settings):
    client = token_client(alice)
    response = client.post("/api/runs/", payload(competition="no-such-competition"), format="multipart")
    assert response.status_code == 400 and "unknown competition" in response.content.decode()
    nothing = payload()
    del nothing["submission"]
    response = client.post("/api/runs/", nothing, format="multipart")
    assert response.status_code == 400 and "upload a submission" in response.content.decode()
    settings.MAX_UPLOAD_BYTES = 5
    response = client.post("/api/runs/", payload(), format="multipart")
    assert response.status_code == 400 and "limit" in response.json()["detail"]


def test_self_reported_score_without_submission(alice, catalogue):
    competition = catalogue.get(slug="spaceship-titanic")
    data = payload(score=competition.gold_threshold)
    del data["submission"]
    response = token_client(alice).post("/api/runs/", data, format="multipart")
    assert response.status_code == 201
    assert response.json()["verification"] == "self_reported" and response.json()["medal"] == "gold"


def test_private_runs_only_for_owner_and_staff(api, alice, bob, staff, catalogue):
    public = submit(alice)
    private = submit(alice, seed=1, is_private=True)
    ids = lambda client: {r["id"] for r in client.get("/api/runs/").json()["results"]}  # noqa: E731
    assert ids(api) == {public.pk}
    assert ids(token_client(bob)) == {public.pk}
    assert ids(token_client(alice)) == {public.pk, private.pk}
    assert ids(token_client(staff)) == {public.pk, private.pk}
    assert api.get(f"/api/runs/{private.pk}/").status_code == 404
    assert token_client(bob).get(f"/api/runs/{private.pk}/").status_code == 404
    assert api.get(f"/api/runs/{public.pk}/").json()["id"] == public.pk


def test_runs_api_is_in_the_schema(api, catalogue):
    schema = api.get("/api/schema/").content.decode()
    assert "/api/runs/" in schema and "/api/leaderboard/" in schema and "RunInput" in schema


def test_runs_outside_the_catalogue_show_their_task_name(api, alice, catalogue):
    run = submit(alice, competition="cifar10", submission=None)
    body = api.get(f"/api/runs/{run.pk}/").json()
    assert body["competition"] is None and body["task_name"] == "cifar10" and body["medal"] == "none"


def test_a_multi_sample_inspect_log_says_only_the_first_sample_was_imported(alice, catalogue):
    from tests.runs.test_submission import TRAJECTORIES

    source = next((TRAJECTORIES / "inspect").glob("*.eval"))
    response = token_client(alice).post("/api/runs/", {
        "competition": "popularity", "agent": "inspect-agent", "model": "gpt-4o",
        "trajectory_files": [SimpleUploadedFile(source.name, source.read_bytes())]}, format="multipart")
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert run.trajectory_format == "inspect" and run.n_steps > 0
    assert any("holds 10 trajectories" in w for w in run.import_warnings)

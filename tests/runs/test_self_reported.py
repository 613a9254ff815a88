"""A claimed score with no submission and no grading report is self-reported: badged wherever it is
shown, left out by "verified only", never a valid submission, and listed after verified rows."""

from __future__ import annotations

import pytest

from leaderboard.models import Run
from leaderboard.runs.outcome import grade_stored_run
from tests.api.test_runs import payload, token_client
from tests.runs.test_submission import answers_for, submission, submit


@pytest.fixture
def claimed(alice, catalogue):
    gold = catalogue.get(slug="spaceship-titanic").gold_threshold
    data = payload(score=gold, agent="claimer")
    del data["submission"]
    response = token_client(alice).post("/api/runs/", data, format="multipart")
    assert response.status_code == 201
    return Run.objects.get(pk=response.json()["id"])


@pytest.fixture
def verified(bob, catalogue, tmp_path):
    answers_for(tmp_path, catalogue)
    run = submit(bob, agent_name="grader-checked", submission=submission(30))
    grade_stored_run(run)
    run.refresh_from_db()
    assert run.verification == Run.Verification.VERIFIED and run.valid_submission
    return run


def test_a_claimed_score_is_never_a_valid_submission(claimed):
    assert claimed.verification == Run.Verification.SELF_REPORTED
    assert not claimed.submission_exists and not claimed.valid_submission
    assert claimed.score is not None


def test_a_grading_report_keeps_what_it_says(alice, catalogue):
    run = submit(alice, submission=None, self_reported_score=0.8,
                 reported={"competition_id": "spaceship-titanic", "score": 0.8, "submission_exists": True,
                           "valid_submission": True})
    assert run.valid_submission and run.submission_exists and run.verification == Run.Verification.SELF_REPORTED


def test_every_page_that_shows_it_says_self_reported(client, claimed):
    run_page = client.get(f"/runs/{claimed.pk}/").content.decode()
    assert "Self-reported" in run_page
    grid = client.get(f"/experiments/{claimed.experiment_id}/").content.decode()
    assert 'class="tag self-reported"' in grid
    assert client.get(f"/runs/{claimed.pk}/status.json").json()["verification"] == "self_reported"
    client.force_login(claimed.owner)
    assert "Self-reported" in client.get(f"/runs/{claimed.pk}/progress/").content.decode()
    api = client.get(f"/api/runs/{claimed.pk}/").json()
    assert api["verification"] == "self_reported" and api["valid_submission"] is False


def test_verified_only_leaves_it_out_and_verified_rows_come_first(client, claimed, verified):
    rows = client.get("/api/leaderboard/?split=dev&pad=true").json()["results"]
    assert [r["agent"] for r in rows] == ["grader-checked", "claimer"]  # although the claim scores higher
    assert rows[1]["any_medal_pct"] > rows[0]["any_medal_pct"] == 0
    rows = client.get("/api/leaderboard/?split=dev&verified=true").json()["results"]
    assert [r["agent"] for r in rows] == ["grader-checked"]
    page = client.get("/?split=dev").content.decode()
    assert page.index("grader-checked") < page.index("claimer") and "Self-reported results" in page

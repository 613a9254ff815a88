"""Uploads never take a research task for a competition: the form does not offer one, and the API and
the services refuse a submission for one with a reason, before any run is saved."""

from __future__ import annotations

import pytest

from leaderboard.models import Benchmark, Competition, Run
from leaderboard.runs.artifacts import UploadError
from tests.api.test_runs import payload, token_client
from tests.runs.test_submission import submit


@pytest.fixture
def wine(catalogue):
    bench, _ = Benchmark.objects.get_or_create(slug="mlagentbench", defaults={"name": "MLAgentBench"})
    return Competition.objects.create(benchmark=bench, slug="sklearn-wine", name="Wine cultivars",
                                      kind=Competition.Kind.RESEARCH, baseline_score=0.9, is_lower_better=False)


def test_the_form_offers_no_research_task(client, alice, wine):
    client.force_login(alice)
    html = client.get("/runs/upload/").content.decode()
    assert 'value="spaceship-titanic"' in html and 'value="sklearn-wine"' not in html
    refused = client.post("/runs/upload/", {"competition": "sklearn-wine", "agent": "a", "model": "m", "seed": "0",
                                            "submission": payload()["submission"]})
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    assert not Run.objects.exists()


def test_the_api_refuses_a_submission_for_a_research_task(alice, wine):
    response = token_client(alice).post("/api/runs/", payload(competition="sklearn-wine"), format="multipart")
    assert response.status_code == 400, response.content
    body = response.content.decode()
    assert "sklearn-wine is a research task" in body and "submit a job" in body
    assert not Run.objects.exists()


def test_the_service_refuses_it_too_and_keeps_nothing(alice, wine):
    with pytest.raises(UploadError, match="scored by running the task's own eval"):
        submit(alice, competition="sklearn-wine")
    assert not Run.objects.exists()

"""A task handed back by its runner before the agent started (its sandbox engine was down): queued
again without spending an attempt, a retried release changes nothing twice, and past the retries the
task and its run fail with the engine's reason. Only the runner holding the task's lease may, and only
before the agent's start."""

from __future__ import annotations

from leaderboard.models import Run
from runner.api_v1.releases import ENGINE_RETRIES
from runner.models import JobTask
from tests.job_support import needs_agent_tools
from tests.runner.test_runner_api import API, runner_client

pytestmark = needs_agent_tools
DOWN = "docker unavailable: Cannot connect to the Docker daemon at unix:///var/run/docker.sock"


def release(client, claim: dict, error=DOWN):
    return client.post(f"{API}tasks/{claim['task']}/release/", {"lease": claim["lease"], "error": error}, format="json")


def test_a_released_task_is_queued_again_with_its_attempt_unspent_and_a_retry_changes_nothing_twice(claimed):
    client, claim, job = claimed
    first, again = release(client, claim), release(client, claim)
    assert first.status_code == again.status_code == 200, first.content
    assert first.json() == again.json() == {"status": "queued", "released": 1}
    task = job.tasks.get()
    assert task.status == JobTask.Status.QUEUED and task.attempts == 0 and task.lease_owner == ""
    assert task.error == f"{DOWN}; handed back by its runner (1 of {ENGINE_RETRIES})"
    next_claim = client.post(API + "claim/", {"wait_s": 0}, format="json").json()
    assert next_claim["task"] == task.pk and next_claim["lease"]["attempt"] == 1
    assert release(client, claim).json() == first.json()  # the first claim's retry, after the next claim
    assert JobTask.objects.get(pk=task.pk).status == JobTask.Status.RUNNING


def test_handed_back_past_its_retries_the_task_and_its_run_fail_saying_why(claimed):
    client, claim, job = claimed
    answers = [release(client, claim).json()]
    for _ in range(ENGINE_RETRIES):
        claim = client.post(API + "claim/", {"wait_s": 0}, format="json").json()
        answers.append(release(client, claim).json())
    assert [a["status"] for a in answers] == ["queued"] * ENGINE_RETRIES + ["failed"]
    task = job.tasks.get()
    why = f"{DOWN}; failed after {ENGINE_RETRIES} retries"
    assert task.status == JobTask.Status.FAILED and task.error == why and task.attempts == 0
    assert Run.objects.get(pk=task.run_id).status == Run.Status.FAILED
    assert Run.objects.get(pk=task.run_id).grading_error == why
    assert client.post(API + "claim/", {"wait_s": 0}, format="json").status_code == 204


def test_only_the_holder_releases_before_the_agent_starts_and_says_why(claimed):
    client, claim, job = claimed
    assert release(runner_client("remote-b"), claim).status_code == 403
    for error in ("", "   ", None, ["x"]):
        answer = release(client, claim, error)
        assert answer.status_code == 400 and "error" in answer.json()["detail"], answer.content
    start = client.post(f"{API}tasks/{claim['task']}/start/", {"lease": claim["lease"], "recipe": {}}, format="json")
    assert start.status_code == 200, start.content
    answer = release(client, claim)
    assert answer.status_code == 409 and "agent started" in answer.json()["detail"]
    task = job.tasks.get()
    assert task.status == JobTask.Status.RUNNING and task.attempts == 1


def test_the_release_is_in_the_openapi_schema(client, db):
    assert "/api/runner/v1/tasks/{id}/release/" in client.get("/api/schema/").content.decode()

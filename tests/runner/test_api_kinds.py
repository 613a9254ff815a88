"""`make run`'s two runners split the work: its loopback runner (over the runner API) takes every task
the runner API serves, and the Celery runner beside it (`--leave-api-kinds`) only the others. Which
kinds those are is said once per side: the site's claim (runner.api_v1.claims) and runner.jobs.api_kinds;
these tests hold them together, per kind of task, so that a claim that starts serving a kind (an
MLE-bench-packaged agent, a research task) fails here until runner.jobs.api_kinds says so too."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from leaderboard.models import Competition
from runner import tasks
from runner.api_v1 import claims, tokens
from runner.jobs import api_kinds
from runner.models import AgentDefinition, JobTask, Runner
from tests.job_support import COMPETITION, needs_agent_tools, scripted_job

pytestmark = needs_agent_tools
KINDS = ["an agent defined on the site", "an MLE-bench-packaged agent", "a research task"]


@pytest.fixture(params=KINDS)
def queued(request, alice, job_world, django_capture_on_commit_callbacks):
    """One queued task of each kind."""
    with django_capture_on_commit_callbacks(execute=False):  # nothing reaches a broker
        job = scripted_job(alice)
    if request.param == "an MLE-bench-packaged agent":
        AgentDefinition.objects.filter(pk=job.agent_id).update(package_format=AgentDefinition.Format.MLEBENCH)
    elif request.param == "a research task":
        Competition.objects.filter(slug=COMPETITION).update(kind=Competition.Kind.RESEARCH)
    task = JobTask.objects.select_related("job__agent", "competition").get(job=job)
    return request.param, task


def api_runner() -> Runner:
    runner, _ = tokens.issue("loopback")
    # on Docker: a packaged agent runs on Docker runners only (runner.api_v1.agents.servable)
    Runner.objects.filter(pk=runner.pk).update(cpu_count=8, memory_gb=64, images=["*"], backend="docker")
    runner.refresh_from_db()
    return runner


def test_api_kinds_says_what_the_sites_claim_serves(queued):
    kind, task = queued
    claimed_by_api = any(candidate.pk == task.pk for candidate in claims._candidates(api_runner()))
    assert api_kinds.api_takes(task) == claimed_by_api, kind
    assert claimed_by_api, kind  # every kind since the remote MLE-bench agents and research tasks merged


@pytest.mark.parametrize("leaves", [True, False])
def test_a_celery_runner_that_leaves_api_kinds_takes_only_the_others(queued, job_world, monkeypatch, leaves):
    kind, task = queued
    Runner.objects.filter(pk=job_world.pk).update(leaves_api_kinds=leaves)
    monkeypatch.setenv("MEDALBOARD_RUNNER_NAME", job_world.name)
    ran = []
    monkeypatch.setattr(
        "runner.execution.supervisor.execute",
        lambda held, **_: ran.append(held.pk) or SimpleNamespace(status="succeeded"),
    )
    answer = tasks.run_job_task(task.pk)
    if leaves and api_kinds.api_takes(task):
        assert answer == "left to a runner attached over the runner API" and ran == []
        assert JobTask.objects.get(pk=task.pk).status == JobTask.Status.QUEUED  # for the API runner to claim
    else:
        assert answer == "succeeded" and ran == [task.pk], kind
        assert JobTask.objects.get(pk=task.pk).runner_id == job_world.pk


def test_the_runners_page_says_what_each_runner_takes(client, job_world):
    Runner.objects.create(name="celery-beside", backend="local", queues=["jobs.cpu", "celery"], leaves_api_kinds=True)
    api_runner()
    page = client.get("/runners/").content.decode()
    assert "tasks over the runner API: every kind" in page
    assert "no job (a runner over the API takes every kind), and grading" in page
    assert "every task of its queues" in page  # job_world's plain Celery runner
    listed = {row["name"]: row["takes"] for row in client.get("/api/runners/").json()}
    assert listed["celery-beside"].endswith(", and grading")
    assert listed["loopback"].startswith("tasks over the runner API")

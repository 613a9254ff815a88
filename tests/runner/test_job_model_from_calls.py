"""A job's model is the one its metered LLM calls went to: a job that names none lands on the board
as the model its agent called, not as "no-llm"; a named model that the calls contradict is flagged on
the run; a job that made no LLM call stays "no-llm". (Local backend, a scripted upstream.)"""

from __future__ import annotations

import sys

import pytest

from leaderboard.models import Run
from leaderboard.runs.job_runs import settle_model
from runner.jobs.services import NO_MODEL, create_job
from runner.models import AgentDefinition, Job
from tests.gateway_support import REAL_OPENAI_KEY, serve_upstream

upstream = pytest.fixture(scope="module")(serve_upstream)

CALLING_AGENT = """
import json, os, urllib.request
body = json.dumps({"model": "MODEL", "messages": [{"role": "user", "content": "plan"}]}).encode()
for n in range(2):
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                     headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    print("call", n, urllib.request.urlopen(request, timeout=30).status, flush=True)
"""


def _run_job(alice, loopback, *, calls: str, named: str = "") -> tuple[Job, Run]:
    AgentDefinition.objects.update_or_create(name="calls-llm", defaults={
        "image": "", "command": [sys.executable, "-c", CALLING_AGENT.replace("MODEL", calls)]})
    job = create_job(user=alice, agent="calls-llm", model=named, competitions=["spaceship-titanic"],
                     time_limit_minutes=1, env={"OPENAI_API_KEY": REAL_OPENAI_KEY})
    task = job.tasks.get()
    loopback.run_graded(task.pk)
    task.refresh_from_db()
    assert "call 1 200" in task.log_tail, (task.error, task.log_tail)
    job.refresh_from_db()
    return job, Run.objects.select_related("experiment__model").get(pk=task.run_id)


def test_a_job_without_a_model_is_on_the_board_as_the_model_it_called(alice, client, loopback, upstream, settings):
    settings.LLM_UPSTREAMS = {"openai": upstream.url + "/v1"}
    upstream.reset()
    job, run = _run_job(alice, loopback, calls="gpt-4o-2024-08-06")
    assert run.experiment.model.name == "gpt-4o-2024-08-06"
    assert str(run.experiment) == "calls-llm + gpt-4o-2024-08-06"
    assert job.experiment_id == run.experiment_id  # the job's later runs start where this one went
    assert any("named no model" in w and "gpt-4o-2024-08-06 (2 calls)" in w for w in run.import_warnings)
    board = client.get("/competitions/spaceship-titanic/").content.decode()
    assert "gpt-4o-2024-08-06" in board and "calls-llm + no-llm" not in board


def test_a_named_model_the_calls_contradict_is_flagged(alice, loopback, upstream, settings):
    settings.LLM_UPSTREAMS = {"openai": upstream.url + "/v1"}
    upstream.reset()
    _, run = _run_job(alice, loopback, calls="gpt-4o-mini", named="claude-opus-4")
    assert run.experiment.model.name == "claude-opus-4"  # what the job said stays; the flag says otherwise
    assert any("names the model 'claude-opus-4'" in w and "gpt-4o-mini (2 calls)" in w for w in run.import_warnings)


@pytest.mark.django_db
def test_a_dated_snapshot_of_the_named_model_is_that_model(alice, job_world):
    job = create_job(user=alice, agent="baseline", model="gpt-4o", competitions=["spaceship-titanic"],
                     time_limit_minutes=1)
    run = Run.objects.create(experiment=job.experiment, competition=job.tasks.get().competition, origin=Run.Origin.JOB)
    assert settle_model(run, named="gpt-4o", seen={"gpt-4o-2024-08-06": 3}, unnamed=NO_MODEL) == ""
    assert "names the model 'gpt-4o'" in settle_model(run, named="gpt-4o", seen={"gpt-4o-mini": 1},
                                                      unnamed=NO_MODEL)


@pytest.mark.django_db
def test_a_job_that_made_no_llm_call_stays_without_a_model(alice, job_world):
    job = create_job(user=alice, agent="baseline", competitions=["spaceship-titanic"], time_limit_minutes=1)
    run = Run.objects.create(experiment=job.experiment, competition=job.tasks.get().competition, origin=Run.Origin.JOB)
    assert settle_model(run, named="", seen={}, unnamed=NO_MODEL) == ""
    run.refresh_from_db()
    assert run.experiment.model.name == NO_MODEL == "no-llm"

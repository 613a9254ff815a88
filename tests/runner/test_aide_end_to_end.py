"""AIDE (aideml from PyPI, packaged in agents/aide/) end to end in Docker (marker docker): imported,
its image built FROM mlebench-env with its wheels fetched on the host, one job of `aide/dev` run by
the loopback runner (a runner attached by URL and token), its model a scripted OpenAI-compatible
server (tests/aide_upstream.py) behind the runner's LLM gateway. The run is graded; its replay shows
AIDE's solution tree and every model call as an `llm` step; its tokens are the scripted usage times
the calls; the job's real key reached only the upstream and is stored nowhere."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from leaderboard.models import Run
from runner.agents.importer import import_agents
from runner.backends.docker import DockerBackend
from runner.jobs.services import create_job
from runner.models import JobTask
from tests.aide_upstream import ACCURACIES, BEST, USAGE, AideUpstream
from tests.job_support import COMPETITION, needs_agent_tools
from tests.runner.test_hostile_agents import everything_about
from tests.trajectories.import_support import stored_steps

pytestmark = [pytest.mark.docker, needs_agent_tools]
REAL_KEY = "sk-real-upstream-key-3f9a1c7e5b2d"
DEV_STEPS = 8  # agents/aide/config.yaml, aide/dev
DRAFTS = 5  # aideml's agent.search.num_drafts: then it improves the best node


@pytest.fixture
def aide_image(mlebench_env, settings):
    started = time.monotonic()
    report = import_agents(Path(settings.BASE_DIR) / "agents", build=True, log=lambda *a: None)
    assert {"aide", "aide/dev"} <= set(report.created + report.updated + report.unchanged)
    [built] = [entry for entry in report.images if entry["image"].startswith("mlebench-agent-aide:")]
    print(f"aide image: {built['image']} {'built' if built['built'] else 'present'} "
          f"in {time.monotonic() - started:.1f} s")
    return built["image"]


def _database() -> str:
    out = io.StringIO()
    call_command("dumpdata", stdout=out)
    return out.getvalue()


def _run_aide(alice, loopback, upstream=None):
    job = create_job(user=alice, agent="aide/dev", competitions=[COMPETITION], time_limit_minutes=10,
                     env={"OPENAI_API_KEY": REAL_KEY})
    task = job.tasks.get()
    started = time.monotonic()
    outcome = loopback.run_graded(task.pk, DockerBackend(), timeout_s=1200)
    print(f"aide/dev run: {time.monotonic() - started:.1f} s, {len(upstream.calls) if upstream else 0} model calls")
    task.refresh_from_db()
    return job, task, outcome


def test_aide_runs_through_the_gateway_and_its_tree_and_model_calls_are_replayed(
        alice, client, loopback, aide_image, settings):
    with AideUpstream() as upstream:
        settings.LLM_UPSTREAMS = {"openai": upstream.url}
        job, task, outcome = _run_aide(alice, loopback, upstream)
    assert job.agent_image == aide_image
    assert outcome.status == JobTask.Status.SUCCEEDED, (outcome.error, task.log_tail)

    # AIDE asked for DEV_STEPS solutions and a review of each (forced submit_review), then its report,
    # all through the Responses API (gpt-4o), with the real key put on by the gateway.
    calls = upstream.calls
    assert [kind for _, _, kind in calls] == ["code", "review"] * DEV_STEPS + ["code"]
    assert {(path, model) for path, model, _ in calls} == {("/v1/responses", "gpt-4o-2024-08-06")}
    assert set(upstream.credentials) == {f"Bearer {REAL_KEY}"}

    run = Run.objects.get(pk=task.run_id)
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None
    names = set(run.artifacts.values_list("name", flat=True))
    assert {"logs/journal.json", "submission/submission.csv", "code/solution.py"} <= names

    # What is graded is the best node's submission (it flipped BEST passengers), not the last one's.
    with run.artifacts.get(name="submission/submission.csv").file.open("rb") as handle:
        assert handle.read().decode().count("True") == BEST

    # The replay: the solution tree read from AIDE's journal, every node scored with what its code
    # printed; after its drafts AIDE improves the best one; one llm step per model call.
    client.force_login(alice)
    tree = client.get(f"/api/runs/{run.pk}/outline/").json()["tree"]
    assert [(node["score"], node["buggy"]) for node in tree] == [(value, False) for value in ACCURACIES]
    assert [node["parent_index"] for node in tree] == [None] * DRAFTS + [tree[BEST]["index"]] * (DEV_STEPS - DRAFTS)
    steps = stored_steps(run)
    llm = [step for step in steps if step.kind == "llm"]
    assert len(llm) == len(calls)
    assert all(step.data["tokens_in"] == USAGE[0] and step.data["tokens_out"] == USAGE[1] for step in llm)
    assert {"plan", "code", "command", "score"} <= {step.kind for step in steps}
    # Each node is linked to the call that wrote it and to its review; the final report to none.
    assert [step.data.get("produced_step") for step in llm if "produced_step" in step.data] == [
        node["index"] for node in tree]
    assert [step.data.get("for_step") for step in llm if "for_step" in step.data] == [node["index"] for node in tree]
    assert not {"produced_step", "for_step"} & set(llm[-1].data)

    assert run.usage_metered and (run.tokens_in, run.tokens_out) == (USAGE[0] * len(calls), USAGE[1] * len(calls))
    assert REAL_KEY.encode() not in everything_about(run, job, client) and REAL_KEY not in _database()


def test_without_an_upstream_aide_stops_at_once_and_the_job_page_says_why(
        alice, client, loopback, aide_image, settings):
    settings.LLM_UPSTREAMS = {}
    started = time.monotonic()
    job, task, outcome = _run_aide(alice, loopback)
    # aideml would retry a 503 until the time limit; launch.py stops on the gateway's final refusal.
    assert time.monotonic() - started < 120 and outcome.status != JobTask.Status.TIMED_OUT
    assert "GatewayRefused" in task.log_tail and "no LLM is reachable from this runner" in task.log_tail
    assert "no LLM is reachable from this runner" in task.error
    client.force_login(alice)
    assert "no LLM is reachable from this runner" in client.get(f"/jobs/{job.pk}/").content.decode()
    assert REAL_KEY.encode() not in everything_about(Run.objects.get(pk=task.run_id), job, client)

"""A job whose agent calls its LLM, on a runner attached with only the site's URL and a token: the
runner's own metered gateway (runner.remote.llm) stands between the agent and a scripted
OpenAI-compatible upstream, the sandbox holds only the run's token, the job's budget stops the agent,
and the run's metered usage, steps and notes on the site are the scripted numbers.
The key is in nothing stored, on the site or on the runner's disk."""

from __future__ import annotations

import json
import os
import sys
from decimal import Decimal

import pytest

from runner.jobs.services import create_job
from runner.models import AgentDefinition, JobTask, LlmPrice
from tests.gateway_support import REAL_OPENAI_KEY, serve_upstream
from tests.job_support import COMPETITION, needs_agent_tools
from tests.llm_upstream import OPENAI_USAGE
from tests.remote_runner_support import RemoteRunner, new_token
from tests.runner.test_hostile_agents import PRELUDE, everything_about

pytestmark = [needs_agent_tools, pytest.mark.serial]
upstream = pytest.fixture(scope="module")(serve_upstream)
CALLS = 2  # the job's llm_max_calls: the agent's third call is refused for the budget
PRICE = (2.5, 10.0)  # USD per 1M tokens in, out
GRACE_S = 1.0

AGENT = """
import urllib.error, urllib.request
key = os.environ["OPENAI_API_KEY"]
print("key in the sandbox:", key, flush=True)
for n in range(CALLS_TRIED):
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": f"plan {n}"}]}).encode()
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                     headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    try:
        print("call", n, urllib.request.urlopen(request, timeout=30).status, flush=True)
    except urllib.error.HTTPError as exc:
        print("call", n, exc.code, flush=True)
valid_submission()
print("refused, working on regardless", flush=True)
time.sleep(600)
""".replace("CALLS_TRIED", str(CALLS + 1))


def llm_job(user, command: list[str] | None = None):
    command = command or [sys.executable, "-c", PRELUDE + AGENT]
    AgentDefinition.objects.update_or_create(name="calls-llm", defaults={"image": "", "command": command})
    return create_job(
        user=user,
        agent="calls-llm",
        competitions=[COMPETITION],
        time_limit_minutes=2,
        settings={"llm_max_calls": CALLS},
        env={"OPENAI_API_KEY": REAL_OPENAI_KEY},
    )


def steps_of(run, client) -> list[dict]:
    lines = b"".join(client.get(f"/runs/{run.pk}/trajectory.jsonl").streaming_content).splitlines()
    return [json.loads(line) for line in lines[1:]]


def meter_of(run, client) -> dict:
    """What the site shows of the run's LLM: its figures, its steps, the notes, the task's error."""
    run.refresh_from_db()
    task = JobTask.objects.get(run=run)
    steps = steps_of(run, client)
    return {
        "figures": (run.tokens_in, run.tokens_out, run.cost_usd, run.usage_metered),
        "model": run.experiment.model.name,
        "steps": [
            (
                s["kind"],
                s["data"].get("tokens_in"),
                s["data"].get("tokens_out"),
                s["data"].get("cost"),
                s["data"].get("status"),
                s["data"].get("limit"),
            )
            for s in steps
        ],
        "notes": [note for note in run.import_warnings if "LLM" in note],
        "error": task.error,
    }


def run_remotely(url: str, job, upstream, folder, *args: str) -> JobTask:
    """The job's task run by `manage.py runner` with the URL, the token and its LLM upstream only."""
    runner = RemoteRunner(
        url,
        new_token(f"remote-llm-{job.pk}"),
        folder,
        "--tasks",
        "1",
        *args,
        llm_upstreams=f"openai={upstream.url}/v1",
    )
    assert runner.wait(240) == 0, runner.output()
    task = JobTask.objects.select_related("run").get(job=job)
    assert task.status == JobTask.Status.SUCCEEDED, (task.error, runner.output())
    return task


def assert_metered_and_stopped_for_budget(task, upstream, client) -> dict:
    """The scripted usage of CALLS calls, exactly, the budget's stop, the key only upstream; the meter."""
    assert f"stopped by the runner {GRACE_S:g} s after its LLM budget ran out" in task.error
    assert f"refused calls past the job's budget: this job's limit of {CALLS} LLM calls is reached" in task.error
    assert "call 0 200" in task.log_tail and f"call {CALLS} 429" in task.log_tail, task.log_tail
    # the real key went upstream only, added by the runner's gateway; the sandbox had the run's token
    seen = [{k.lower(): v for k, v in r["headers"].items()}.get("authorization") for r in upstream.requests]
    assert seen == [f"Bearer {REAL_OPENAI_KEY}"] * CALLS
    assert "key in the sandbox: [" in task.log_tail and "medalboard-run-" not in task.log_tail
    meter = meter_of(task.run, client)
    tokens_in, tokens_out = OPENAI_USAGE[0] * CALLS, OPENAI_USAGE[1] * CALLS
    cost = round(CALLS * (OPENAI_USAGE[0] * PRICE[0] + OPENAI_USAGE[1] * PRICE[1]) / 1_000_000, 6)
    assert meter["figures"] == (tokens_in, tokens_out, cost, True)
    assert [step[0] for step in meter["steps"]] == ["llm"] * CALLS + ["error"]
    assert meter["steps"][-1][-1] == "max_calls" and meter["model"] == "gpt-4o"
    return meter


def assert_key_in_nothing_stored(task, job, client, runner_folder) -> None:
    stored = everything_about(task.run, job, client)
    assert REAL_OPENAI_KEY.encode() not in stored and b"medalboard-run-" not in stored
    on_disk = [p for p in runner_folder.rglob("*") if p.is_file() and REAL_OPENAI_KEY.encode() in p.read_bytes()]
    assert on_disk == []


@pytest.fixture
def llm_world(live_server, transactional_db, job_world, upstream, settings):
    settings.JOB_BUDGET_GRACE_S = GRACE_S
    LlmPrice.objects.create(pattern="gpt-4o*", input_usd_per_mtok=Decimal("2.5"), output_usd_per_mtok=Decimal("10"))
    upstream.reset()
    return live_server.url


def test_a_remote_runners_gateway_meters_the_run(llm_world, alice, client, upstream, tmp_path):
    job = llm_job(alice)
    task = run_remotely(llm_world, job, upstream, tmp_path / "host")
    assert_metered_and_stopped_for_budget(task, upstream, client)
    assert_key_in_nothing_stored(task, job, client, tmp_path / "host")


@pytest.mark.docker
def test_a_remote_runners_docker_sandbox_reaches_its_llm_only_through_the_gateway(
    llm_world, alice, client, upstream, tmp_path
):
    """Network none: the agent's calls go through the forwarder and the gateway's socket, and the
    upstream itself is out of its reach."""
    from django.conf import settings

    from runner.backends.docker import DockerBackend

    if not DockerBackend().image_exists(settings.MEDALBOARD_AGENT_IMAGE):
        pytest.skip(f"agent image {settings.MEDALBOARD_AGENT_IMAGE} not built (python manage.py build_agent_image)")
    direct = f"""
try:
    urllib.request.urlopen("{upstream.url}", timeout=3)
    print("upstream reached directly", flush=True)
except Exception as exc:
    print("no direct route:", type(exc).__name__, flush=True)
"""
    job = llm_job(
        alice, ["python3", "-c", PRELUDE + AGENT.replace("valid_submission()", direct + "valid_submission()")]
    )
    name = f"gw31-remote-llm-{os.getpid()}"
    task = run_remotely(llm_world, job, upstream, tmp_path / "host", "--backend", "docker", "--name", name)
    assert "no direct route" in task.log_tail and "upstream reached directly" not in task.log_tail
    assert task.run.recipe["sandbox"]["backend"] == "docker" and task.run.recipe["sandbox"]["attached"] == "api"
    assert_metered_and_stopped_for_budget(task, upstream, client)
    assert_key_in_nothing_stored(task, job, client, tmp_path / "host")
    assert DockerBackend(runner_name=name).client.containers.list(all=True, filters={"name": name}) == []

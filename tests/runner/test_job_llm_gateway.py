"""A job's agent reaches its LLM through the metered gateway (marker docker): the sandbox keeps network
none and holds only the run's token; each call is an `llm` step of the run, live and at the end; the
run's tokens are the upstream's usage summed by the gateway and marked metered; the real key is
nowhere in what the run stored or shows."""

from __future__ import annotations

import json

import pytest

from leaderboard.models import Run
from runner.models import JobTask
from tests.gateway_support import REAL_OPENAI_KEY, serve_upstream
from tests.llm_upstream import OPENAI_USAGE
from tests.runner.test_hostile_agents import everything_about, hostile_job, run_task

pytestmark = pytest.mark.docker
upstream = pytest.fixture(scope="module")(serve_upstream)
CALLS = 3

AGENT = f"""
import urllib.request
base, key = os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
print("key in the sandbox:", key, flush=True)
for n in range({CALLS}):
    body = json.dumps({{"model": "gpt-4o", "messages": [{{"role": "user", "content": f"plan {{n}}"}}]}}).encode()
    request = urllib.request.Request(base + "/chat/completions", data=body, headers={{
        "Authorization": "Bearer " + key, "Content-Type": "application/json"}})
    reply = json.load(urllib.request.urlopen(request, timeout=30))
    print("reply", n, reply["usage"], flush=True)
try:
    urllib.request.urlopen("{{UPSTREAM}}", timeout=3)
    print("upstream reached directly", flush=True)
except Exception as exc:
    print("no direct route:", type(exc).__name__, flush=True)
valid_submission()
"""


def test_an_agents_llm_calls_go_through_the_metered_gateway(alice, client, loopback, docker_backend, upstream,
                                                            settings):
    settings.LLM_UPSTREAMS = {"openai": upstream.url + "/v1"}
    upstream.reset()
    job = hostile_job(alice, AGENT.replace("{UPSTREAM}", upstream.url), env={"OPENAI_API_KEY": REAL_OPENAI_KEY})
    outcome, run, _ = run_task(job, loopback, docker_backend)
    task = JobTask.objects.get(run=run)
    assert outcome.status == JobTask.Status.SUCCEEDED, (outcome.error, task.log_tail)
    assert "no direct route" in task.log_tail and "upstream reached directly" not in task.log_tail
    seen = [{k.lower(): v for k, v in r["headers"].items()}.get("authorization") for r in upstream.requests]
    assert seen == [f"Bearer {REAL_OPENAI_KEY}"] * CALLS  # the real key, added by the gateway on the way out
    run.refresh_from_db()
    assert run.status == Run.Status.GRADED and run.valid_submission
    assert run.usage_metered and (run.tokens_in, run.tokens_out) == (OPENAI_USAGE[0] * CALLS, OPENAI_USAGE[1] * CALLS)
    trajectory = b"".join(client.get(f"/runs/{run.pk}/trajectory.jsonl").streaming_content)
    assert trajectory.count(b'"kind":"llm"') + trajectory.count(b'"kind": "llm"') == CALLS, trajectory[:2000]
    stored = everything_about(run, job, client)
    assert REAL_OPENAI_KEY.encode() not in stored
    assert b"usage_metered" in stored and b"metered" in stored


LOCAL_AGENT = """
import json, os, urllib.error, urllib.request
body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                 headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
try:
    urllib.request.urlopen(request, timeout=10)
except urllib.error.HTTPError as exc:
    print("gateway said", exc.code, json.load(exc)["error"]["message"], flush=True)
"""


def test_without_an_upstream_the_job_page_says_no_llm_is_reachable(alice, client, loopback, settings):
    import sys

    from runner.jobs.services import create_job
    from runner.models import AgentDefinition

    settings.LLM_UPSTREAMS = {}
    AgentDefinition.objects.update_or_create(name="asks-llm", defaults={
        "image": "", "command": [sys.executable, "-c", LOCAL_AGENT]})
    job = create_job(user=alice, agent="asks-llm", competitions=["spaceship-titanic"], time_limit_minutes=1,
                     env={"OPENAI_API_KEY": REAL_OPENAI_KEY})
    task = job.tasks.get()
    loopback.run_graded(task.pk)
    task.refresh_from_db()
    assert "gateway said 503 no LLM is reachable from this runner" in task.log_tail
    assert "no LLM is reachable from this runner" in task.error
    client.force_login(alice)
    assert "no LLM is reachable from this runner" in client.get(f"/jobs/{job.pk}/").content.decode()
    assert REAL_OPENAI_KEY not in task.log_tail


WAITING_AGENT = """
import json, os, time, urllib.request
body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "plan"}]}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                 headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
print("reply", json.load(urllib.request.urlopen(request, timeout=30))["usage"], flush=True)
deadline = time.time() + 40
while not os.path.exists(os.environ["GO_ON_FLAG"]) and time.time() < deadline:
    time.sleep(0.1)
"""


def test_an_llm_step_reaches_the_run_while_the_agent_still_works(alice, client, loopback, upstream, settings,
                                                                 tmp_path):
    import sys
    import threading

    from django.db import connection

    from runner.jobs.services import create_job
    from runner.models import AgentDefinition
    from tests.job_support import wait_until

    settings.LLM_UPSTREAMS = {"openai": upstream.url + "/v1"}
    flag = tmp_path / "go-on"
    AgentDefinition.objects.update_or_create(name="waits", defaults={
        "image": "", "command": [sys.executable, "-c", WAITING_AGENT]})
    job = create_job(user=alice, agent="waits", competitions=["spaceship-titanic"], time_limit_minutes=1,
                     env={"OPENAI_API_KEY": REAL_OPENAI_KEY, "GO_ON_FLAG": str(flag)})
    task = job.tasks.get()

    def supervise() -> None:
        try:
            loopback.run_graded(task.pk)
        finally:
            connection.close()  # this thread's own

    worker = threading.Thread(target=supervise)
    worker.start()
    try:
        run = wait_until(lambda: Run.objects.filter(job_task=task, n_steps__gte=1).first(), 30, "an llm step")
        assert JobTask.objects.get(pk=task.pk).status == JobTask.Status.RUNNING  # the agent is still waiting
        steps = b"".join(client.get(f"/runs/{run.pk}/trajectory.jsonl").streaming_content).replace(b": ", b":")
        assert steps.count(b'"kind":"llm"') == 1 and REAL_OPENAI_KEY.encode() not in steps
    finally:
        flag.touch()
        worker.join(60)
    assert JobTask.objects.get(pk=task.pk).status in JobTask.FINISHED


TWO_CALLS_AGENT = """
import json, os, urllib.error, urllib.request
body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "plan"}]}).encode()
for n in range(2):
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                     headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    try:
        print("call", n, urllib.request.urlopen(request, timeout=30).status, flush=True)
    except urllib.error.HTTPError as exc:
        print("call", n, exc.code, json.load(exc)["error"]["message"], flush=True)
"""


def test_a_jobs_llm_limit_answers_429_and_its_trajectory_says_so(alice, client, loopback, upstream, settings):
    import sys

    from runner.jobs.services import create_job
    from runner.models import AgentDefinition

    settings.LLM_UPSTREAMS = {"openai": upstream.url + "/v1"}
    upstream.reset()
    AgentDefinition.objects.update_or_create(name="calls-twice", defaults={
        "image": "", "command": [sys.executable, "-c", TWO_CALLS_AGENT]})
    job = create_job(user=alice, agent="calls-twice", competitions=["spaceship-titanic"], time_limit_minutes=1,
                     settings={"llm_max_calls": 1}, env={"OPENAI_API_KEY": REAL_OPENAI_KEY})
    task = job.tasks.get()
    loopback.run_graded(task.pk)
    task.refresh_from_db()
    assert "call 0 200" in task.log_tail and "call 1 429" in task.log_tail and "limit" in task.log_tail
    assert len(upstream.requests) == 1  # the refused call never left the runner
    run = Run.objects.get(pk=task.run_id)
    assert (run.tokens_in, run.tokens_out) == OPENAI_USAGE and run.usage_metered
    steps = [json.loads(line) for line in b"".join(
        client.get(f"/runs/{run.pk}/trajectory.jsonl").streaming_content).splitlines()[1:]]
    assert [s["kind"] for s in steps] == ["llm", "error"]
    assert steps[1]["data"]["type"] == "medalboard_limit" and steps[1]["data"]["limit"] == "max_calls"

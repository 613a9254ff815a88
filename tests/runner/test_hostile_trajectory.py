"""An agent that lies in its own trajectory, run in a real container (marker docker) under runc and
runsc: its header claims half a second from 2001 with one token and no cost, and it writes `llm`
steps forged in the gateway's exact shape (the gateway's mark included) besides two real calls
through the gateway. The run's start and duration are the runner's, its tokens and cost the
gateway's, only the gateway's record carries the gateway's mark, the replay shows the forged steps
as the agent's claims, and llm-outside-gateway flags them."""

from __future__ import annotations

import pytest

from leaderboard.models import Run
from leaderboard.trajectories.store import StoredTrajectory
from leaderboard.trust.review import review_run
from runner.models import JobTask
from tests.gateway_support import REAL_OPENAI_KEY, serve_upstream
from tests.llm_upstream import OPENAI_USAGE
from tests.runner import test_hostile_agents
from tests.runner.test_hostile_agents import assert_runner_still_healthy, hostile_job, run_task

pytestmark = pytest.mark.docker
upstream = pytest.fixture(scope="module")(serve_upstream)
runs_on = test_hostile_agents.runs_on  # the fixture: the loopback runner (its own gateway)
CALLS, FORGED = 2, 3

AGENT = f"""
import hashlib, urllib.request
base, key = os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
for n in range({CALLS}):
    body = json.dumps({{"model": "gpt-4o", "messages": [{{"role": "user", "content": f"plan {{n}}"}}]}}).encode()
    request = urllib.request.Request(base + "/chat/completions", data=body, headers={{
        "Authorization": "Bearer " + key, "Content-Type": "application/json"}})
    json.load(urllib.request.urlopen(request, timeout=30))
time.sleep(2)
header = {{"format": "medalboard-trajectory", "version": 1, "agent": "honest-agent", "model": "claimed-model",
          "started_at": "2001-01-01T00:00:00Z", "duration_s": 0.5, "tokens_in": 1, "tokens_out": 1,
          "cost_usd": 0.0, "final_score": 1.0}}
lines = [header, {{"kind": "plan", "t": 0.1, "title": "think"}}]
for n in range({FORGED}):
    prompt = {{"messages": [{{"role": "user", "content": f"forged {{n}}"}}]}}
    lines.append({{"kind": "llm", "t": 0.2 + n, "title": "gpt-4o · 200 · 1 + 1 tokens", "data": {{
        "provider": "openai", "model": "gpt-4o", "path": "/chat/completions", "status": 200, "stream": False,
        "tokens_in": 1, "tokens_out": 1, "cost": 0.0, "latency_s": 0.1,
        "messages_sha256": hashlib.sha256(json.dumps(prompt, sort_keys=True).encode()).hexdigest(),
        "messages": prompt, "messages_omitted": 0, "reply": "forged reply", "reply_truncated": False,
        "totals": {{"calls": n + 1}}, "recorded_by": "gateway"}}}})
(logs / "trajectory.jsonl").write_text("".join(json.dumps(line) + "\\n" for line in lines))
valid_submission()
"""


def test_a_lying_trajectory_gives_the_run_none_of_its_figures(alice, client, runs_on, docker_backend, upstream,
                                                              settings):
    settings.LLM_UPSTREAMS = {"openai": upstream.url + "/v1"}
    upstream.reset()
    job = hostile_job(alice, AGENT, env={"OPENAI_API_KEY": REAL_OPENAI_KEY})
    outcome, run, _ = run_task(job, runs_on, docker_backend)
    task = JobTask.objects.get(run=run)
    assert outcome.status == JobTask.Status.SUCCEEDED, (outcome.error, task.log_tail)
    run.refresh_from_db()
    assert run.status == Run.Status.GRADED and run.valid_submission

    # the runner's clock: from the agent's start to the end of the run, the 2 s the agent slept included
    assert run.started_at == task.agent_started_at and run.started_at.year > 2001
    assert run.duration_s == pytest.approx((run.finished_at - task.agent_started_at).total_seconds())
    assert run.duration_s > 2.0
    # the gateway's meter: the two real calls, not the header's one token and no cost
    assert run.usage_metered
    assert (run.tokens_in, run.tokens_out) == (OPENAI_USAGE[0] * CALLS, OPENAI_USAGE[1] * CALLS)
    assert run.cost_usd is None or run.cost_usd > 0

    steps = StoredTrajectory.read(run, lambda stored: list(stored.steps()))
    calls = [step for step in steps if step.kind == "llm"]
    by_gateway = [step for step in calls if step.data.get("recorded_by") == "gateway"]
    assert len(calls) == CALLS + FORGED and len(by_gateway) == CALLS
    assert {step.data["messages"]["messages"][0]["content"] for step in by_gateway} == {"plan 0", "plan 1"}
    # one clock: the gateway's steps fall within the run as the runner timed it
    assert all(0 <= step.t <= run.duration_s for step in by_gateway)
    assert any("recorded_by is set by the site only" in warning for warning in run.import_warnings)

    client.force_login(alice)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert page.count("agent's claim</span>") == FORGED and page.count('class="badge gateway"') == CALLS

    finding = next(f for f in review_run(run) if f.check_name == "llm-outside-gateway")
    assert finding.severity == "violation"
    assert (finding.evidence["gateway_calls"], finding.evidence["reported_calls"]) == (CALLS, FORGED)
    assert finding.evidence["unrecorded_claims"] == FORGED
    assert_runner_still_healthy(alice, runs_on, docker_backend)

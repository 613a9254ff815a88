"""llm-outside-gateway: direct calls to LLM APIs, solution code calling an LLM, and job runs whose
agent reports more calls than the gateway metered, or forges calls in the gateway's shape."""

from __future__ import annotations

import pytest

from leaderboard.models import Run
from tests.trust.support import HONEST, check, code, command, make_run

pytestmark = pytest.mark.django_db

GATEWAY_SHAPE = {"provider": "openai", "model": "gpt-4o", "status": 200, "tokens_in": 10, "tokens_out": 5,
                 "messages_sha256": "ab" * 32, "totals": {"calls": 1}}
# what the runner's path stores for a call the gateway recorded: the gateway's shape and its mark
GATEWAY_CALL = {"kind": "llm", "title": "gpt-4o · 200", "data": {**GATEWAY_SHAPE, "recorded_by": "gateway"}}
# the agent's own step in the gateway's shape, for a prompt the gateway never saw (no mark: the import strips it)
FORGED_CALL = {"kind": "llm", "title": "gpt-4o · 200", "data": {**GATEWAY_SHAPE, "messages_sha256": "cd" * 32}}
AGENT_REPORTED_CALL = {"kind": "llm", "title": "gpt-4o", "data": {"model": "gpt-4o", "tokens_in": 10, "tokens_out": 5}}


def test_a_direct_call_to_an_llm_api_is_a_violation():
    run = make_run([*HONEST, command('curl https://api.openai.com/v1/chat/completions -H "Authorization: Bearer '
                                     'sk-proj-abcdefghijklmnopqrstuvwxyz012345"')])
    hit = check(run, "llm-outside-gateway")
    assert hit.severity == "violation" and hit.steps == [len(HONEST)]
    assert "sk-proj-abcdefghijklmnopqrstuvwxyz012345" not in repr(hit.evidence)  # keys masked in quotes


def test_solution_code_that_asks_an_llm_for_predictions_is_a_warning():
    solution = ("from openai import OpenAI\nclient = OpenAI()\n"
                "label = client.chat.completions.create(model='gpt-4o', messages=[{'role': 'user', 'content': row}])\n")
    hit = check(make_run([*HONEST, code(solution)]), "llm-outside-gateway")
    assert hit.severity == "warning" and hit.steps == [len(HONEST)]


def test_a_job_run_whose_agent_reports_unmetered_calls():
    run = make_run([GATEWAY_CALL, AGENT_REPORTED_CALL, AGENT_REPORTED_CALL, *HONEST], origin=Run.Origin.JOB,
                   usage_metered=True)
    hit = check(run, "llm-outside-gateway")
    assert hit.severity == "violation"
    assert hit.evidence["gateway_calls"] == 1 and hit.evidence["reported_calls"] == 2


@pytest.mark.parametrize("steps,origin", [
    ([GATEWAY_CALL, AGENT_REPORTED_CALL, *HONEST], Run.Origin.JOB),  # the agent logs the call the gateway saw
    ([AGENT_REPORTED_CALL, AGENT_REPORTED_CALL, *HONEST], Run.Origin.UPLOAD),  # a scaffold's own calls
    ([*HONEST, code("# results compared with gpt-4o, see api.openai.com docs\n" + HONEST[3]["data"]["content"])],
     Run.Origin.UPLOAD),
    ([*HONEST, code("import openai  # unused\n" + HONEST[3]["data"]["content"])], Run.Origin.UPLOAD),
], ids=["metered-and-logged", "upload-scaffold", "comment", "import-without-call"])
def test_near_misses_are_not_findings(steps, origin):
    assert check(make_run(steps, origin=origin), "llm-outside-gateway") is None


def test_a_gateway_shaped_step_without_the_runners_mark_is_the_agents_claim():
    run = make_run([FORGED_CALL, FORGED_CALL, *HONEST], origin=Run.Origin.JOB, usage_metered=True)
    hit = check(run, "llm-outside-gateway")
    assert hit.severity == "violation" and hit.steps == [0, 1]
    assert hit.evidence["gateway_calls"] == 0 and hit.evidence["reported_calls"] == 2
    assert "2 LLM step(s) the agent wrote name a prompt the gateway never saw" in hit.summary


def test_a_forged_call_is_flagged_even_when_the_counts_match():
    """One real call and one forged in the gateway's shape: the counts agree, the prompt digest does not."""
    run = make_run([GATEWAY_CALL, FORGED_CALL, *HONEST], origin=Run.Origin.JOB, usage_metered=True)
    hit = check(run, "llm-outside-gateway")
    assert hit.severity == "violation" and hit.steps == [1]
    assert hit.evidence["unrecorded_claims"] == 1 and hit.evidence["reported_calls"] == 1


def test_the_agent_logging_the_gateways_own_call_is_no_finding():
    logged = {"kind": "llm", "title": "gpt-4o", "data": {**GATEWAY_SHAPE}}  # the same prompt digest
    assert check(make_run([logged, GATEWAY_CALL, *HONEST], origin=Run.Origin.JOB), "llm-outside-gateway") is None

"""llm-outside-gateway: direct calls to LLM APIs, solution code calling an LLM, and job runs whose
agent reports more calls than the gateway metered."""

from __future__ import annotations

import pytest

from leaderboard.models import Run
from tests.trust.support import HONEST, check, code, command, make_run

pytestmark = pytest.mark.django_db

GATEWAY_CALL = {"kind": "llm", "title": "gpt-4o · 200", "data": {
    "provider": "openai", "model": "gpt-4o", "status": 200, "tokens_in": 10, "tokens_out": 5,
    "messages_sha256": "ab" * 32, "totals": {"calls": 1}}}
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

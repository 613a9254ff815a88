"""The replay's `llm` steps: who recorded the call (the gateway, or the agent's own claim) and the
prompt and reply, collapsed; the gateway keeps a Responses API reply's function calls too."""

from __future__ import annotations

import re

import pytest

from runner.gateway.providers.openai import OpenAI
from tests.trust.support import make_run

GATEWAY = {"provider": "openai", "model": "gpt-4o", "tokens_in": 20, "tokens_out": 5, "cost": 0.001,
           "messages_sha256": "ab" * 32, "recorded_by": "gateway",
           "messages": {"instructions": "You are AIDE.", "input": [{"role": "user", "content": "plan the <model>"}]},
           "reply": "[tool call submit_review] {\"is_bug\": false}"}
CLAIM = {"model": "gpt-4o", "tokens_in": 1, "tokens_out": 1, "prompt": "what I say I asked",
         "response": "and its answer"}


@pytest.mark.django_db
def test_llm_steps_show_their_recorder_prompt_and_reply(client):
    run = make_run([{"kind": "llm", "title": "by the gateway", "data": GATEWAY},
                    {"kind": "llm", "title": "by the agent", "data": CLAIM}])
    page = client.get(f"/runs/{run.pk}/").content.decode()
    cards = re.findall(r'<article class="step kind-llm".*?</article>', page, re.S)
    assert len(cards) == 2
    assert 'class="badge gateway"' in cards[0] and "agent's claim" not in cards[0]
    assert "agent's claim" in cards[1] and 'class="badge gateway"' not in cards[1]
    assert '<details class="llm-prompt"><summary>Prompt' in cards[0]
    assert "[instructions]\nYou are AIDE." in cards[0] and "user: plan the &lt;model&gt;" in cards[0]
    assert "[tool call submit_review] {&quot;is_bug&quot;: false}" in cards[0]
    assert "what I say I asked" in cards[1] and "and its answer" in cards[1]


def test_a_responses_api_function_call_is_the_reply():
    response = {"output": [{"type": "reasoning", "summary": []},
                           {"type": "function_call", "name": "submit_review", "arguments": '{"is_bug": false}'}]}
    assert OpenAI().reply(response) == '[tool call submit_review] {"is_bug": false}'


def test_a_streamed_responses_api_function_call_is_the_reply():
    events = [{"type": "response.output_item.added", "item": {"type": "function_call", "name": "submit_review"}},
              {"type": "response.function_call_arguments.delta", "delta": '{"is_bug": '},
              {"type": "response.function_call_arguments.delta", "delta": "true}"},
              {"type": "response.output_item.added", "item": {"type": "message"}},
              {"type": "response.output_text.delta", "delta": " done"}]
    assert "".join(OpenAI().reply(event) for event in events) == '[tool call submit_review] {"is_bug": true} done'

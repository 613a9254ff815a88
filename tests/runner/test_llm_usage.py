"""Usage and reply text read from each provider's replies as the gateway sees them pass: whole bodies,
server-sent events cut at any byte, CRLF line ends, Gemini's JSON-array streams."""

from __future__ import annotations

import json

import pytest

from runner.gateway.observe import EventFilter, Observer
from runner.gateway.providers import PROVIDERS


def sse(events: list[dict], newline: str = "\n") -> bytes:
    return "".join(f"data: {json.dumps(e)}{newline}{newline}" for e in events).encode()


def observe(provider: str, body: bytes, event_stream: bool, chunk: int = 0) -> Observer:
    observer = Observer(PROVIDERS[provider], event_stream)
    step = chunk or max(len(body), 1)
    for at in range(0, len(body), step):
        observer.feed(body[at:at + step])
    observer.finish()
    return observer


RESPONSES_STREAM = sse([
    {"type": "response.created", "response": {"usage": None}},
    {"type": "response.output_text.delta", "delta": "Hi"},
    {"type": "response.output_text.delta", "delta": " there"},
    {"type": "response.completed", "response": {"usage": {"input_tokens": 21, "output_tokens": 4}}},
])
ANTHROPIC_STREAM = b"".join(
    f"event: {e['type']}\r\ndata: {json.dumps(e)}\r\n\r\n".encode() for e in [
        {"type": "message_start", "message": {"usage": {"input_tokens": 30, "cache_creation_input_tokens": 2,
                                                        "cache_read_input_tokens": 8, "output_tokens": 1}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lo"}},
        {"type": "message_delta", "delta": {}, "usage": {"output_tokens": 9}},
    ])
GEMINI_SSE = sse([
    {"candidates": [{"content": {"parts": [{"text": "A"}]}}], "usageMetadata": {"promptTokenCount": 5}},
    {"candidates": [{"content": {"parts": [{"text": "B"}]}}],
     "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "thoughtsTokenCount": 10}},
])
GEMINI_ARRAY = json.dumps([
    {"candidates": [{"content": {"parts": [{"text": "A"}]}}], "usageMetadata": {"promptTokenCount": 5}},
    {"candidates": [{"content": {"parts": [{"text": "B"}]}}],
     "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3}},
]).encode()


@pytest.mark.parametrize("provider, body, event_stream, tokens, reply", [
    ("openai", RESPONSES_STREAM, True, (21, 4), "Hi there"),
    ("anthropic", ANTHROPIC_STREAM, True, (40, 9), "Hello"),  # input: 30 + 2 + 8 cached
    ("gemini", GEMINI_SSE, True, (5, 12), "AB"),  # output: 2 + 10 thinking
    ("gemini", GEMINI_ARRAY, False, (5, 3), "AB"),
    ("openai", json.dumps({"output": [{"content": [{"type": "output_text", "text": "ok"}]}],
                           "usage": {"input_tokens": 7, "output_tokens": 1}}).encode(), False, (7, 1), "ok"),
    ("openai", json.dumps({"choices": [{"message": {"content": None, "tool_calls": [
        {"function": {"name": "bash", "arguments": "{\"cmd\": \"ls\"}"}}]}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2}}).encode(), False, (3, 2),
     '[tool call bash] {"cmd": "ls"}'),
])
@pytest.mark.parametrize("chunk", [0, 1, 7])  # whole, byte by byte, odd cuts
def test_usage_and_reply_are_read_however_the_bytes_are_cut(provider, body, event_stream, tokens, reply, chunk):
    observer = observe(provider, body, event_stream, chunk)
    assert (observer.usage.tokens_in, observer.usage.tokens_out) == tokens
    assert observer.reply_text == reply


@pytest.mark.parametrize("body", [b"", b"not json", b'{"usage": {"prompt_tokens": -1, "completion_tokens": "7"}}',
                                  b'{"usage": {"prompt_tokens": true}}', b"[1, 2]"])
def test_no_usage_or_a_malformed_one_counts_nothing(body):
    observer = observe("openai", body, False)
    assert (observer.usage.tokens_in, observer.usage.tokens_out) == (None, None)


@pytest.mark.parametrize("chunk", [1, 5, 1000])
def test_the_event_filter_drops_only_the_usage_chunk_however_the_bytes_are_cut(chunk):
    events = [{"choices": [{"delta": {"content": "a"}}], "usage": None}, {"choices": [], "usage": {"x": 1}},
              {"choices": [{"delta": {}}], "usage": None}]
    body = sse(events, "\r\n") + b"data: [DONE]\r\n\r\n"
    hide = EventFilter(PROVIDERS["openai"])
    out = b"".join(hide.feed(body[at:at + chunk]) for at in range(0, len(body), chunk)) + hide.flush()
    assert out == sse([events[0], events[2]], "\r\n") + b"data: [DONE]\r\n\r\n"

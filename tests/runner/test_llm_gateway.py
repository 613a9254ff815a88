"""The LLM gateway (runner.gateway) in front of a scripted upstream: the real keys stay on the runner,
usage and cost are counted as the upstream reported them, limits refuse calls, streams pass through
as they arrive, and nothing but the configured upstreams is reachable."""

from __future__ import annotations

import hashlib
import json
import threading
import time

import httpx
import orjson
import pytest

from runner.gateway import Gateway, Limits, split_secrets
from runner.gateway.keys import TOKEN_VARIABLE
from tests.gateway_support import (
    MESSAGES,
    OTHER_SECRET,
    REAL_ANTHROPIC_KEY,
    REAL_KEYS,
    REAL_OPENAI_KEY,
    free_port,
    raw_request,
    serve_upstream,
    start_gateway,
)
from tests.llm_upstream import ANTHROPIC_CACHED, ANTHROPIC_USAGE, GEMINI_USAGE, OPENAI_USAGE

upstream = pytest.fixture(scope="module")(serve_upstream)


@pytest.fixture
def gw(upstream, tmp_path):
    upstream.reset()
    upstream.chunk_pause_s = 0.0
    harness = start_gateway(upstream.url, tmp_path)
    yield harness
    harness.gateway.stop()


def limited(upstream, tmp_path, **limits):
    upstream.reset()
    return start_gateway(upstream.url, tmp_path, limits=Limits(**limits))


# --- the keys -------------------------------------------------------------------------------------


def test_the_sandbox_gets_the_runs_token_in_place_of_each_provider_key(gw):
    env = gw.sandbox_env
    assert env["OPENAI_API_KEY"] == env["ANTHROPIC_API_KEY"] == env["GEMINI_API_KEY"] == gw.token
    assert env[TOKEN_VARIABLE] == gw.token and len(gw.token) > 40
    assert env["HF_TOKEN"] == OTHER_SECRET  # not a provider key: passed as it is
    assert not any(key in value for key in REAL_KEYS for value in env.values())
    assert split_secrets({"OPENAI_API_KEY": "x" * 20})[1].token != gw.token  # a new token per run


def test_the_real_keys_reach_only_the_upstream(gw, upstream):
    leaky = {"model": "leaky", "messages": MESSAGES, "max_tokens": 10}
    responses = [gw.openai({"model": "gpt-4o", "messages": MESSAGES}), gw.openai(leaky),
                 gw.openai({**leaky, "stream": True}), gw.anthropic({**leaky, "model": "claude-sonnet-4-test"}),
                 gw.anthropic(leaky), gw.anthropic({**leaky, "stream": True})]
    assert [r.status_code for r in responses] == [200] * 6
    sent = {r["path"]: r["headers"] for r in upstream.requests}
    assert sent["/v1/chat/completions"]["authorization"] == f"Bearer {REAL_OPENAI_KEY}"
    assert sent["/v1/messages"]["x-api-key"] == REAL_ANTHROPIC_KEY
    assert "authorization" not in {name.lower() for name in sent["/v1/messages"]}
    assert gw.token not in json.dumps(upstream.requests)  # the token is the gateway's; it never goes upstream

    got = "".join(r.text + json.dumps(dict(r.headers)) for r in responses)
    assert got.count("[key removed by the gateway]") == 4  # the leaky upstream's replies, streamed and not
    assert "x-debug-credential" not in got  # its header with the key is dropped
    recorded = json.dumps(gw.steps) + gw.steps_path.read_text()
    for key in REAL_KEYS:
        assert key not in got and key not in recorded


def test_the_token_in_a_query_parameter_goes_upstream_as_the_key_header(gw, upstream):
    reply = httpx.post(f"{gw.base}/gemini/v1beta/models/gemini-2.0-flash:generateContent?key={gw.token}&alt=json",
                       json={"contents": [{"parts": [{"text": "hi"}]}]})
    assert reply.status_code == 200
    (request,) = upstream.requests
    assert request["path"] == "/v1beta/models/gemini-2.0-flash:generateContent?alt=json"  # key= removed
    assert request["headers"]["x-goog-api-key"] == REAL_KEYS[2]
    assert gw.steps[-1]["data"]["model"] == "gemini-2.0-flash"
    assert (gw.steps[-1]["data"]["tokens_in"], gw.steps[-1]["data"]["tokens_out"]) == GEMINI_USAGE


# --- usage and cost -------------------------------------------------------------------------------

ANTHROPIC_IN = ANTHROPIC_USAGE[0] + ANTHROPIC_CACHED


@pytest.mark.parametrize("provider, stream, model, tokens, price", [
    ("openai", False, "gpt-4o-mini", OPENAI_USAGE, (2.5, 10.0)),
    ("openai", True, "gpt-4o-mini", OPENAI_USAGE, (2.5, 10.0)),
    ("anthropic", False, "claude-sonnet-4-test", (ANTHROPIC_IN, ANTHROPIC_USAGE[1]), (3.0, 15.0)),
    ("anthropic", True, "claude-sonnet-4-test", (ANTHROPIC_IN, ANTHROPIC_USAGE[1]), (3.0, 15.0)),
])
def test_tokens_and_cost_are_the_upstreams_usage_times_the_price(gw, upstream, provider, stream, model, tokens,
                                                                 price):
    call = gw.openai if provider == "openai" else gw.anthropic
    for _ in range(2):
        assert call({"model": model, "messages": MESSAGES, "max_tokens": 10, "stream": stream}).status_code == 200
    cost = (tokens[0] * price[0] + tokens[1] * price[1]) / 1e6
    step = gw.steps[-1]
    assert step["kind"] == "llm" and step["data"]["stream"] is stream and step["data"]["status"] == 200
    assert (step["data"]["tokens_in"], step["data"]["tokens_out"]) == tokens
    assert step["data"]["cost"] == pytest.approx(cost, rel=1e-12)
    assert step["data"]["reply"] == "Hello there"
    totals = gw.gateway.totals()
    assert (totals.calls, totals.tokens_in, totals.tokens_out) == (2, 2 * tokens[0], 2 * tokens[1])
    assert totals.cost_usd == pytest.approx(2 * cost, rel=1e-12)
    assert gw.file_steps(2) == gw.steps  # the callback and the file (while the gateway runs) hold the same steps


def test_a_streamed_openai_call_is_asked_for_its_usage_which_reaches_only_a_client_that_asked(gw, upstream):
    body = {"model": "gpt-4o", "messages": MESSAGES, "stream": True}
    replies = [gw.openai(body), gw.openai({**body, "stream_options": {"include_usage": False}}),
               gw.openai({**body, "stream_options": {"include_usage": True}})]
    assert [r["body"]["stream_options"] for r in upstream.requests] == [{"include_usage": True}] * 3
    assert [s["data"]["tokens_out"] for s in gw.steps] == [OPENAI_USAGE[1]] * 3
    events = [[json.loads(e[6:]) for e in r.text.split("\n\n") if e.startswith("data: {")] for r in replies]
    assert [[bool(e["choices"]) for e in got] for got in events] == [[True] * 4, [True] * 4, [True] * 4 + [False]]
    assert events[2][-1]["usage"]["completion_tokens"] == OPENAI_USAGE[1]
    assert all(r.text.endswith("data: [DONE]\n\n") for r in replies)


@pytest.mark.django_db
def test_the_steps_file_imports_as_a_trajectory_with_the_same_totals(gw):
    from leaderboard.trajectories.importers import read_trajectories

    gw.openai({"model": "gpt-4o", "messages": MESSAGES})
    gw.anthropic({"model": "claude-sonnet-4-test", "messages": MESSAGES, "stream": True})
    gw.gateway.stop()
    parsed = next(read_trajectories(gw.steps_path))
    steps = list(parsed.steps)
    totals = gw.gateway.totals()
    assert [s.kind for s in steps] == ["llm", "llm"]
    assert (parsed.meta.tokens_in, parsed.meta.tokens_out) == (totals.tokens_in, totals.tokens_out)
    assert parsed.meta.cost_usd == pytest.approx(totals.cost_usd)


def test_a_long_prompt_is_kept_bounded_with_the_digest_of_all_of_it(gw):
    messages = [{"role": "user", "content": f"{i} " + "x" * 1000} for i in range(500)]
    assert gw.openai({"model": "gpt-4o", "messages": messages}).status_code == 200
    data = gw.steps[-1]["data"]
    assert data["messages_sha256"] == hashlib.sha256(orjson.dumps({"messages": messages},
                                                                  option=orjson.OPT_SORT_KEYS)).hexdigest()
    kept = data["messages"]["messages"]
    assert len(orjson.dumps(kept)) <= 64 * 1024 and kept[-1] == messages[-1]  # the latest are kept
    assert data["messages_omitted"] == 500 - len(kept) > 0


# --- limits ---------------------------------------------------------------------------------------

ONE_CALL_COST = (OPENAI_USAGE[0] * 2.5 + OPENAI_USAGE[1] * 10.0) / 1e6


@pytest.mark.parametrize("limits, allowed", [
    ({"max_calls": 2}, 2),
    ({"max_tokens": sum(OPENAI_USAGE) * 2}, 2),  # the third would pass it
    ({"max_cost_usd": ONE_CALL_COST * 1.5}, 2),  # the second call ends past the limit; the third is refused
])
def test_a_limit_stops_calls_with_429(upstream, tmp_path, limits, allowed):
    gw = limited(upstream, tmp_path, **limits)
    try:
        replies = [gw.openai({"model": "gpt-4o", "messages": MESSAGES}) for _ in range(allowed)]
        assert gw.gateway.meter.budget_refused() is None  # spent, but nothing refused yet: the agent may end
        before = time.monotonic()
        replies += [gw.openai({"model": "gpt-4o", "messages": MESSAGES}) for _ in range(2)]
    finally:
        gw.gateway.stop()
    assert [r.status_code for r in replies] == [200] * allowed + [429, 429]
    error = replies[-1].json()["error"]
    when, why = gw.gateway.meter.budget_refused()  # what the supervisor stops the sandbox on, after a grace
    assert before <= when <= time.monotonic() and why == error["message"]
    assert error["type"] == "medalboard_limit" and "limit" in error["message"]
    assert len(upstream.requests) == allowed  # refused calls never went upstream
    refusals = [s for s in gw.steps if s["kind"] == "error"]
    assert len(refusals) == 2 and refusals[0]["data"]["limit"] == next(iter(limits))
    assert refusals[0]["data"]["message"] == error["message"]


def test_with_a_cost_limit_a_model_without_a_price_is_refused(upstream, tmp_path):
    gw = limited(upstream, tmp_path, max_cost_usd=1.0)
    try:
        reply = gw.openai({"model": "some-unpriced-model", "messages": MESSAGES})
    finally:
        gw.gateway.stop()
    assert reply.status_code == 429 and "no price" in reply.json()["error"]["message"]
    assert upstream.requests == []
    assert gw.gateway.meter.budget_refused() is None  # another model may still be called: not the budget


def test_the_concurrency_limit_refuses_a_call_while_another_runs(upstream, tmp_path):
    gw = limited(upstream, tmp_path, max_concurrent=1)
    first: list[httpx.Response] = []
    slow = threading.Thread(target=lambda: first.append(gw.openai({"model": "slow", "messages": MESSAGES})))
    try:
        slow.start()
        assert upstream.received.wait(10)
        second = gw.openai({"model": "gpt-4o", "messages": MESSAGES})
        slow.join(10)
        third = gw.openai({"model": "gpt-4o", "messages": MESSAGES})
    finally:
        gw.gateway.stop()
    assert second.status_code == 429 and second.json()["error"]["type"] == "medalboard_limit"
    assert "concurrent" in second.json()["error"]["message"]
    assert first[0].status_code == 200 and third.status_code == 200  # one at a time is fine
    assert gw.gateway.meter.budget_refused() is None  # waiting helps: not the budget


# --- streaming ------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_stream_reaches_the_client_as_the_upstream_sends_it(gw, upstream, provider):
    upstream.chunk_pause_s = 0.25
    path, headers = (("/openai/v1/chat/completions", {"authorization": f"Bearer {gw.token}"}) if provider == "openai"
                     else ("/anthropic/v1/messages", {"x-api-key": gw.token}))
    arrivals = []
    with httpx.stream("POST", gw.base + path, headers=headers, timeout=30,
                      json={"model": "gpt-4o", "messages": MESSAGES, "stream": True, "max_tokens": 5}) as reply:
        for chunk in reply.iter_raw():
            arrivals.append((time.monotonic(), chunk))
    assert reply.status_code == 200 and reply.headers["content-type"] == "text/event-stream"
    sent = upstream.chunk_sent_at
    assert len(sent) >= 5 and len(arrivals) >= 5  # in pieces, not one buffered body
    assert arrivals[0][0] < sent[-1] - 0.5  # the first piece came long before the upstream sent the last
    assert b"Hel" in arrivals[0][1] + arrivals[1][1] + arrivals[2][1]


# --- what is refused ------------------------------------------------------------------------------

TOKEN = "{token}"


@pytest.mark.parametrize("request_bytes, status", [
    (b"GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", 400),  # absolute form: a proxy request
    (b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 405),
    (b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: api.openai.com\r\nAuthorization: Bearer {token}\r\n"
     b"Content-Length: 2\r\n\r\n{}", 421),  # a Host that is not the gateway
    (b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1.evil.example\r\n"
     b"Authorization: Bearer {token}\r\nContent-Length: 2\r\n\r\n{}", 421),
    (b"POST /evil/v1/x HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Length: 0\r\n\r\n", 404),
    (b"POST /openai/v1/../../x HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
     b"Content-Length: 0\r\n\r\n", 400),
    (b"POST /openai/v1/%2e%2e/%2E%2E/x HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
     b"Content-Length: 0\r\n\r\n", 400),
    (b"POST /openai/v1/x%2f..%2fy HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
     b"Content-Length: 0\r\n\r\n", 400),
    (b"POST /openai/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
     b"Content-Length: 0\r\n\r\n", 404),  # outside the SDK's base URL /openai/v1
    (b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}", 401),
    (b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}x\r\n"
     b"Content-Length: 2\r\n\r\n{}", 401),
    (b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
     REAL_OPENAI_KEY.encode() + b"\r\nContent-Length: 2\r\n\r\n{}", 401),  # the real key is not the token
    (b"POST /anthropic/v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: wrong\r\nContent-Length: 2\r\n\r\n{}",
     401),
    (b"GARBAGE\r\n\r\n", 400),
])
def test_the_gateway_refuses_what_is_not_a_call_to_a_configured_upstream(gw, upstream, request_bytes, status):
    answer = raw_request(gw.gateway.port, request_bytes.replace(b"{token}", gw.token.encode()))
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == str(status).encode(), answer[:300]
    assert upstream.requests == []
    if status != 400 or b"GARBAGE" not in request_bytes:
        assert json.loads(body.split(b"\r\n")[-3] if b"chunked" in head else body)["error"]["message"]


def test_without_an_upstream_the_gateway_says_no_llm_is_reachable(upstream, tmp_path):
    gw = start_gateway(upstream.url, tmp_path, upstreams={})
    try:
        reply = gw.openai({"model": "gpt-4o", "messages": MESSAGES})
    finally:
        gw.gateway.stop()
    assert reply.status_code == 503
    assert "no LLM is reachable from this runner" in reply.json()["error"]["message"]
    assert "no LLM is reachable from this runner" in gw.gateway.status()
    assert gw.steps[-1]["kind"] == "error" and gw.steps[-1]["data"]["status"] == 503


def test_the_status_names_the_job_keys_this_runner_cannot_use(upstream, tmp_path):
    gw = start_gateway(upstream.url, tmp_path, upstreams={"openai": upstream.url + "/v1"})
    gw.gateway.stop()
    assert "ANTHROPIC_API_KEY (anthropic)" in gw.gateway.status() and "openai" not in gw.gateway.status()


def test_an_unreachable_upstream_is_a_502_recorded_as_such(upstream, tmp_path):
    gw = start_gateway(upstream.url, tmp_path, upstreams={"openai": f"http://127.0.0.1:{free_port()}/v1"})
    try:
        reply = gw.openai({"model": "gpt-4o", "messages": MESSAGES})
    finally:
        gw.gateway.stop()
    assert reply.status_code == 502 and reply.json()["error"]["type"] == "medalboard_upstream"
    assert gw.steps[-1]["data"]["status"] == 502 and "could not be reached" in gw.steps[-1]["data"]["error"]
    assert gw.gateway.totals().in_flight == 0


def test_a_request_body_past_the_limit_is_refused(gw, upstream, monkeypatch):
    from runner.gateway import server

    monkeypatch.setattr(server, "MAX_REQUEST_BYTES", 1000)
    reply = gw.openai({"model": "gpt-4o", "messages": [{"role": "user", "content": "x" * 2000}]})
    assert reply.status_code == 413 and upstream.requests == []


def test_one_connection_serves_many_calls(gw, upstream):
    with httpx.Client(base_url=gw.base, headers={"authorization": f"Bearer {gw.token}"}) as client:
        replies = [client.post("/openai/v1/chat/completions", json={"model": "gpt-4o", "messages": MESSAGES})
                   for _ in range(5)]
        client.post("/nowhere/x", json={})  # a refusal keeps the connection usable too
        replies.append(client.post("/openai/v1/chat/completions", json={"model": "gpt-4o", "messages": MESSAGES}))
    assert [r.status_code for r in replies] == [200] * 6
    assert gw.gateway.totals().calls == 6


def test_a_gateway_needs_somewhere_to_listen():
    with pytest.raises(ValueError, match="Unix socket path or a TCP port"):
        Gateway(keys=split_secrets({})[1], upstreams={}).start()


def test_the_usage_of_a_reply_too_long_to_keep_is_read_from_its_end(gw):
    reply = gw.openai({"model": "huge", "messages": MESSAGES})
    assert reply.status_code == 200 and len(reply.content) > 9 << 20  # passed on whole
    data = gw.steps[-1]["data"]
    assert (data["tokens_in"], data["tokens_out"]) == OPENAI_USAGE


def test_connections_past_the_cap_are_closed(gw, monkeypatch):
    import socket

    from runner.gateway import server

    monkeypatch.setattr(server, "MAX_CONNECTIONS", 2)
    held = [socket.create_connection(("127.0.0.1", gw.gateway.port)) for _ in range(2)]
    time.sleep(0.2)
    try:
        with socket.create_connection(("127.0.0.1", gw.gateway.port), timeout=5) as third:
            try:
                assert third.recv(1) == b""  # closed at once, before any request
            except ConnectionResetError:
                pass
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.2)
    assert gw.openai({"model": "gpt-4o", "messages": MESSAGES}).status_code == 200  # room again


def test_request_bodies_past_the_gateways_budget_are_refused(gw, upstream, monkeypatch):
    from runner.gateway import server

    monkeypatch.setattr(server, "BODY_BUDGET_BYTES", 1000)
    reply = gw.openai({"model": "gpt-4o", "messages": [{"role": "user", "content": "x" * 2000}]})
    assert reply.status_code == 503 and reply.json()["error"]["type"] == "medalboard_busy"
    assert upstream.requests == []
    assert gw.openai({"model": "gpt-4o", "messages": MESSAGES}).status_code == 200  # the budget was given back


def test_a_client_that_leaves_mid_stream_frees_its_slot_and_is_recorded(upstream, tmp_path):
    upstream.chunk_pause_s = 0.2
    gw = limited(upstream, tmp_path, max_concurrent=1)
    try:
        with httpx.stream("POST", f"{gw.base}/openai/v1/chat/completions", timeout=30,
                          headers={"authorization": f"Bearer {gw.token}"},
                          json={"model": "gpt-4o", "messages": MESSAGES, "stream": True}) as reply:
            next(reply.iter_raw())  # the first piece, then hang up
        deadline = time.monotonic() + 5
        while gw.gateway.totals().in_flight and time.monotonic() < deadline:
            time.sleep(0.05)
        upstream.chunk_pause_s = 0.0
        after = gw.openai({"model": "gpt-4o", "messages": MESSAGES})
    finally:
        gw.gateway.stop()
    assert after.status_code == 200  # the slot came back
    left = gw.steps[0]["data"]
    assert left["client_disconnected"] is True and left["status"] == 200 and left["reply"].startswith("Hel")


def test_an_upstream_error_passes_through_and_is_recorded(gw, upstream):
    reply = httpx.post(f"{gw.base}/openai/v1/embeddings", json={"model": "text-embedding-3-small", "input": "x"},
                       headers={"authorization": f"Bearer {gw.token}"})
    assert reply.status_code == 404 and "no route" in reply.json()["error"]["message"]  # the upstream's own answer
    assert upstream.requests[0]["path"] == "/v1/embeddings"
    assert gw.steps[-1]["kind"] == "llm" and gw.steps[-1]["data"]["status"] == 404


def test_stopping_the_gateway_mid_stream_ends_the_call_and_removes_the_socket(upstream, tmp_path):
    upstream.reset()
    upstream.chunk_pause_s = 0.3
    gw = start_gateway(upstream.url, tmp_path, unix_path=tmp_path / "gateway.sock", tcp_port=0)
    got = []

    def stream():
        try:
            with httpx.stream("POST", f"{gw.base}/openai/v1/chat/completions", timeout=30,
                              headers={"authorization": f"Bearer {gw.token}"},
                              json={"model": "gpt-4o", "messages": MESSAGES, "stream": True}) as reply:
                got.extend(reply.iter_raw())
        except httpx.HTTPError as exc:
            got.append(exc)

    client = threading.Thread(target=stream)
    client.start()
    assert upstream.received.wait(10)
    time.sleep(0.4)
    began = time.monotonic()
    gw.gateway.stop()
    client.join(10)
    upstream.chunk_pause_s = 0.0
    assert time.monotonic() - began < 5 and not client.is_alive()
    assert not (tmp_path / "gateway.sock").exists()
    assert gw.steps and gw.steps[-1]["kind"] == "llm"  # the cut call is recorded all the same


def test_the_gateways_step_file_is_written_as_the_sites_importer_writes_the_format(gw):
    """The gateway writes its lines itself (a remote runner holds nothing of the site's): line for
    line what the site's own writer makes of the same header and steps."""
    from leaderboard.runs.job_runs import header_line, step_line

    assert gw.openai({"model": "gpt-4o", "messages": MESSAGES}).status_code == 200
    gw.gateway.stop()
    lines = gw.steps_path.read_bytes().splitlines(keepends=True)
    assert lines[0] == header_line({"agent": "medalboard-llm-gateway"})
    assert lines[1:] == [step_line(step) for step in gw.steps] and len(lines) == 2

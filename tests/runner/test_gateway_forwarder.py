"""The in-sandbox forwarder (runner/agent_tools/gateway_forwarder.py): a TCP port on 127.0.0.1 whose
connections go to the gateway's Unix socket. The providers' own SDKs, pointed at it by the variables
environment() gives, work through it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from runner.gateway import environment
from tests.gateway_support import MESSAGES, REAL_KEYS, free_port, serve_upstream, start_gateway
from tests.llm_upstream import ANTHROPIC_CACHED, ANTHROPIC_USAGE, OPENAI_USAGE

upstream = pytest.fixture(scope="module")(serve_upstream)
FORWARDER = Path(__file__).resolve().parents[2] / "runner" / "agent_tools" / "gateway_forwarder.py"


@pytest.fixture
def socket_gateway(upstream, tmp_path):
    upstream.reset()
    # deeper than a Unix socket address can name (107 bytes): the gateway binds it all the same
    folder = tmp_path / ("task-folder-with-a-long-name-" * 3) / "task-1-a1.runner"
    harness = start_gateway(upstream.url, folder, unix_path=folder / "gateway.sock")
    assert len(os.fsencode(harness.gateway.unix_path)) > 107
    yield harness
    harness.gateway.stop()


def start_forwarder(socket_path: Path, port: int) -> subprocess.Popen:
    """The forwarder on `port`, naming the socket relative to its folder: a path as short as the one
    mounted in a sandbox (a Unix socket address holds 107 bytes at most)."""
    process = subprocess.Popen([sys.executable, str(FORWARDER), "--port", str(port), "--socket", socket_path.name],
                               stderr=subprocess.PIPE, text=True, cwd=socket_path.parent)
    line = process.stderr.readline()
    assert f"listening on 127.0.0.1:{port}" in line, line
    return process


@pytest.fixture
def forwarded(socket_gateway):
    port = free_port()
    process = start_forwarder(socket_gateway.gateway.unix_path, port)
    yield socket_gateway, environment(port)
    process.terminate()
    process.wait(10)


def test_the_openai_sdk_works_through_the_forwarder(forwarded, upstream):
    gw, env = forwarded
    client = openai.OpenAI(base_url=env["OPENAI_BASE_URL"], api_key=gw.sandbox_env["OPENAI_API_KEY"], max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert reply.choices[0].message.content == "Hello there"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == OPENAI_USAGE
    pieces = [c.choices[0].delta.content for c in client.chat.completions.create(
        model="gpt-4o", messages=MESSAGES, stream=True) if c.choices and c.choices[0].delta.content]
    assert "".join(pieces) == "Hello there"
    assert [s["data"]["tokens_in"] for s in gw.steps] == [OPENAI_USAGE[0]] * 2
    assert upstream.requests[0]["headers"]["authorization"] == f"Bearer {REAL_KEYS[0]}"


def test_the_anthropic_sdk_works_through_the_forwarder(forwarded, upstream):
    gw, env = forwarded
    client = anthropic.Anthropic(base_url=env["ANTHROPIC_BASE_URL"], api_key=gw.sandbox_env["ANTHROPIC_API_KEY"],
                                 max_retries=0)
    reply = client.messages.create(model="claude-sonnet-4-test", max_tokens=10, messages=MESSAGES)
    assert reply.content[0].text == "Hello there" and reply.usage.output_tokens == ANTHROPIC_USAGE[1]
    with client.messages.stream(model="claude-sonnet-4-test", max_tokens=10, messages=MESSAGES) as stream:
        assert "".join(stream.text_stream) == "Hello there"
    assert [s["data"]["tokens_in"] for s in gw.steps] == [ANTHROPIC_USAGE[0] + ANTHROPIC_CACHED] * 2
    assert upstream.requests[0]["headers"]["x-api-key"] == REAL_KEYS[1]


def test_the_sdk_with_a_wrong_key_gets_the_gateways_401(forwarded, upstream):
    _, env = forwarded
    client = openai.OpenAI(base_url=env["OPENAI_BASE_URL"], api_key="sk-guessed", max_retries=0)
    with pytest.raises(openai.AuthenticationError, match="missing or wrong token"):
        client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert upstream.requests == []


def test_many_concurrent_streams_through_the_forwarder(forwarded):
    gw, env = forwarded

    async def main():
        client = openai.AsyncOpenAI(base_url=env["OPENAI_BASE_URL"], api_key=gw.token, max_retries=0)

        async def one():
            stream = await client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True)
            return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

        import asyncio

        return await asyncio.gather(*[one() for _ in range(40)])

    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    # in a thread of its own: Playwright's sync API, used by the browser tests of the same session,
    # leaves an event loop running in the main thread, where asyncio.run refuses to start another
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(asyncio.run, main()).result() == ["Hello there"] * 40
    assert gw.gateway.totals().calls == 40 and gw.gateway.totals().tokens_out == 40 * OPENAI_USAGE[1]


def test_the_forwarder_runs_a_command_while_forwarding_and_exits_with_its_code(socket_gateway):
    port = free_port()
    code = ("import json, os, sys, urllib.request\n"
            "req = urllib.request.Request(os.environ['OPENAI_BASE_URL'] + '/chat/completions',\n"
            "    data=json.dumps({'model': 'gpt-4o', 'messages': []}).encode(),\n"
            "    headers={'authorization': 'Bearer ' + os.environ['OPENAI_API_KEY'],\n"
            "             'content-type': 'application/json'})\n"
            "reply = json.load(urllib.request.urlopen(req, timeout=20))\n"
            "sys.exit(reply['usage']['completion_tokens'])\n")
    env = {**os.environ, **environment(port), **socket_gateway.sandbox_env}
    process = subprocess.Popen([sys.executable, str(FORWARDER), "--port", str(port), "--socket", "gateway.sock",
                                "--", sys.executable, "-c", code], env=env, stderr=subprocess.PIPE, text=True,
                               cwd=socket_gateway.gateway.unix_path.parent)
    assert process.wait(30) == OPENAI_USAGE[1], process.stderr.read()  # the command's exit code, passed on


def test_the_forwarder_says_so_when_the_socket_is_missing(tmp_path):
    port = free_port()
    process = start_forwarder(tmp_path / "missing.sock", port)
    try:
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/openai/v1/models", timeout=5)
        time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(10)
    assert "cannot reach" in process.stderr.read()


def test_environment_points_every_sdk_at_the_gateway():
    env = environment(8787)
    assert env["OPENAI_BASE_URL"] == env["OPENAI_API_BASE"] == "http://127.0.0.1:8787/openai/v1"
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8787/anthropic"
    assert env["OPENROUTER_BASE_URL"] == "http://127.0.0.1:8787/openrouter/v1"
    assert env["GEMINI_API_BASE"] == env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:8787/gemini"


def test_the_forwarder_carries_bulk_both_ways_byte_for_byte_and_passes_a_half_close_on(tmp_path):
    """Megabytes each way through a Unix socket server that reads to EOF before it answers: the
    forwarder must hold back a side its peer cannot take yet, and pass the client's half-close on."""
    import hashlib
    import socket
    import threading

    path = tmp_path / "echo.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(1)
    received = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            digest, size = hashlib.sha256(), 0
            while chunk := conn.recv(1 << 16):  # to the client's EOF
                digest.update(chunk)
                size += len(chunk)
            received.append((size, digest.hexdigest()))
            conn.sendall(bytes(range(256)) * (24 << 12))  # 24 MiB back, then close

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    port = free_port()
    process = start_forwarder(path, port)
    sent = os.urandom(16 << 20)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            client.sendall(sent)
            client.shutdown(socket.SHUT_WR)
            reply = hashlib.sha256()
            size = 0
            while chunk := client.recv(1 << 16):
                reply.update(chunk)
                size += len(chunk)
        server.join(30)
    finally:
        process.terminate()
        process.wait(10)
        listener.close()
    assert received == [(len(sent), hashlib.sha256(sent).hexdigest())]
    assert (size, reply.hexdigest()) == (24 << 20, hashlib.sha256(bytes(range(256)) * (24 << 12)).hexdigest())

"""A gateway under test: the real one (runner.gateway) in front of the scripted upstream (tests.llm_upstream)."""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from runner.gateway import Gateway, Limits, split_secrets
from tests.llm_upstream import ScriptedUpstream

REAL_OPENAI_KEY = "sk-proj-REAL-openai-key-0123456789abcdef"
REAL_ANTHROPIC_KEY = "sk-ant-REAL-anthropic-key-fedcba9876543210"
REAL_GEMINI_KEY = "AIzaREAL-gemini-key-00112233445566"
REAL_KEYS = (REAL_OPENAI_KEY, REAL_ANTHROPIC_KEY, REAL_GEMINI_KEY)
OTHER_SECRET = "hf_passes-through-unchanged"
MESSAGES = [{"role": "user", "content": "Say hello"}]
PRICES = {"gpt-4o*": (2.5, 10.0), "claude-sonnet-4*": (3.0, 15.0)}


def serve_upstream():
    """The scripted upstream, as a fixture: `upstream = pytest.fixture(scope="module")(serve_upstream)`."""
    with ScriptedUpstream() as scripted:
        yield scripted


@dataclass
class Harness:
    gateway: Gateway
    sandbox_env: dict[str, str]
    steps: list[dict]

    @property
    def token(self) -> str:
        return self.gateway.keys.token

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.gateway.port}"

    def openai(self, body: dict, token: str | None = None) -> httpx.Response:
        return httpx.post(f"{self.base}/openai/v1/chat/completions", json=body, timeout=30,
                          headers={"authorization": f"Bearer {token or self.token}"})

    def anthropic(self, body: dict) -> httpx.Response:
        return httpx.post(f"{self.base}/anthropic/v1/messages", json=body, timeout=30,
                          headers={"x-api-key": self.token, "anthropic-version": "2023-06-01"})

    def file_steps(self, count: int, within_s: float = 2.0) -> list[dict]:
        """The steps in the gateway's file once it holds `count` (it is flushed within FLUSH_S of a step)."""
        deadline = time.monotonic() + within_s
        while True:
            steps = [json.loads(line) for line in self.steps_path.read_text().splitlines()[1:]]
            if len(steps) >= count or time.monotonic() > deadline:
                return steps
            time.sleep(0.02)

    @property
    def steps_path(self) -> Path:
        return self.gateway.recorder.path


def start_gateway(upstream_url: str, folder: Path, limits: Limits | None = None, upstreams: dict | None = None,
                  **listen) -> Harness:
    sandbox_env, keys = split_secrets({"OPENAI_API_KEY": REAL_OPENAI_KEY, "ANTHROPIC_API_KEY": REAL_ANTHROPIC_KEY,
                                       "GEMINI_API_KEY": REAL_GEMINI_KEY, "HF_TOKEN": OTHER_SECRET})
    if upstreams is None:
        upstreams = {"openai": f"{upstream_url}/v1", "anthropic": upstream_url, "gemini": upstream_url}
    steps: list[dict] = []
    gateway = Gateway(keys=keys, upstreams=upstreams, prices=PRICES, limits=limits, steps_path=folder / "llm.jsonl",
                      on_step=steps.append)
    gateway.start(**(listen or {"tcp_port": 0}))
    return Harness(gateway, sandbox_env, steps)


def raw_request(port: int, request: bytes) -> bytes:
    """What the gateway answers to these exact bytes (for requests no HTTP client would send)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while data := sock.recv(65536):
            chunks.append(data)
    return b"".join(chunks)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]

"""What the LLM gateway adds to a call, against calling the upstream directly. A benchmark, not a test.

    DEBUG=true .venv/bin/python benchmarks/gateway.py [--calls 1000] [--streams 100]

A scripted OpenAI-style upstream (tests/llm_upstream.py) on 127.0.0.1; the real gateway
(runner.gateway) in front of it, on TCP and on a Unix socket behind the in-sandbox forwarder
(runner/agent_tools/gateway_forwarder.py), the path a sandbox's call takes. Measured in the same run:

- latency per non-streamed call, one keep-alive client, direct vs through the gateway (interleaved, so
  drift hits both alike): the gateway's added p50 (target: under 2 ms) and the ratio of the p50s;
- 100 concurrent streamed calls, direct vs through the gateway: wall time, and that none is lost
  (each reply whole, each call's usage counted, one llm step per call).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
os.environ.setdefault("DEBUG", "true")

import django  # noqa: E402

django.setup()
logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request would be most of the output

import httpx  # noqa: E402

from runner.gateway import Gateway, split_secrets  # noqa: E402
from tests.gateway_support import free_port  # noqa: E402
from tests.llm_upstream import OPENAI_USAGE, REPLY, ScriptedUpstream  # noqa: E402

FORWARDER = ROOT / "runner" / "agent_tools" / "gateway_forwarder.py"
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": "You are terse."},
                                             {"role": "user", "content": "Say hello " * 50}]}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latencies(direct: httpx.Client, gateways: dict[str, httpx.Client], calls: int) -> dict[str, list[float]]:
    clients = {"direct": direct, **gateways}
    times: dict[str, list[float]] = {name: [] for name in clients}
    for i in range(calls + 50):
        for name, client in clients.items():
            began = time.perf_counter()
            reply = client.post("/chat/completions", json=BODY)
            elapsed = time.perf_counter() - began
            assert reply.status_code == 200, reply.text
            if i >= 50:  # warm-up: connections, pools, caches
                times[name].append(elapsed * 1000)
    return times


async def streams(base_url: str, token: str, count: int) -> tuple[float, list[str]]:
    limits = httpx.Limits(max_connections=count + 10)
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, limits=limits, timeout=60) as client:
        async def one() -> str:
            body = {**BODY, "stream": True}
            async with client.stream("POST", "/chat/completions", json=body) as reply:
                return "" if reply.status_code != 200 else (await reply.aread()).decode()

        began = time.perf_counter()
        bodies = await asyncio.gather(*[one() for _ in range(count)])
        return time.perf_counter() - began, bodies


def complete(body: str) -> bool:
    return body.count('"content": ') == len(REPLY) and body.rstrip().endswith("data: [DONE]")


def spawn(*args: str, log: Path, cwd: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """This script (or the forwarder) in another process, so the upstream, the gateway and the client
    each have an interpreter of their own, as on a runner; and the first line it prints."""
    mine = args[0] == __file__
    process = subprocess.Popen([sys.executable, *args], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=log.open("w") if mine else subprocess.PIPE, text=True)
    line = (process.stdout if mine else process.stderr).readline().strip()
    if not line:
        raise RuntimeError(f"{args[0]} did not start: see {log}")
    return process, line


def serve_upstream() -> None:
    with ScriptedUpstream(chunk_pause_s=0.02) as upstream:
        print(upstream.url, flush=True)
        sys.stdin.read()  # until the benchmark closes it


def serve_gateway(upstream_url: str, folder: Path, token_file: Path) -> None:
    """A gateway as the runner holds one; prints its port, and its totals when stdin closes."""
    sandbox_env, keys = split_secrets({"OPENAI_API_KEY": "sk-bench-real-key-0123456789"})
    token_file.write_text(sandbox_env["OPENAI_API_KEY"])
    gateway = Gateway(keys=keys, upstreams={"openai": f"{upstream_url}/v1"}, prices={"gpt-4o-mini*": (0.15, 0.6)},
                      steps_path=folder / "llm.jsonl")
    gateway.start(tcp_port=0, unix_path=folder / "gateway.sock")
    started = os.times()
    print(gateway.port, flush=True)
    sys.stdin.read()
    gateway.stop()
    ended = os.times()
    cpu_s = ended.user + ended.system - started.user - started.system
    print(json.dumps({**gateway.totals().as_dict(), "cpu_s": cpu_s}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--serve", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve_upstream() if not args.serve else serve_gateway(args.serve[0], Path(args.serve[1]), Path(args.serve[2]))
        return
    folder = Path(tempfile.mkdtemp(prefix="medalboard-bench-gateway-"))
    upstream, upstream_url = spawn(__file__, "--serve", log=folder / "upstream.log")
    gateway, port = spawn(__file__, "--serve", upstream_url, str(folder), str(folder / "token"),
                          log=folder / "gateway.log")
    forwarder, _ = spawn(str(FORWARDER), "--port", str(forwarded_port := free_port()), "--socket", "gateway.sock",
                         log=folder / "forwarder.log", cwd=folder)
    token = (folder / "token").read_text()
    try:
        auth = {"authorization": f"Bearer {token}"}
        with httpx.Client(base_url=f"{upstream_url}/v1") as direct, \
                httpx.Client(base_url=f"http://127.0.0.1:{port}/openai/v1", headers=auth) as tcp, \
                httpx.Client(base_url=f"http://127.0.0.1:{forwarded_port}/openai/v1", headers=auth) as forwarded:
            gateways = {"gateway (TCP)": tcp, "forwarder + gateway (Unix socket)": forwarded}
            times = latencies(direct, gateways, args.calls)
        report_latency(times)
        direct_s, direct_bodies = asyncio.run(streams(f"{upstream_url}/v1", "", args.streams))
        gateway_s, bodies = asyncio.run(streams(f"http://127.0.0.1:{forwarded_port}/openai/v1", token, args.streams))
    finally:
        forwarder.terminate()
        totals, _ = gateway.communicate("", timeout=60)
        upstream.communicate("", timeout=60)
    steps = (folder / "llm.jsonl").read_text().splitlines()[1:]
    report_streams(args, direct_s, direct_bodies, gateway_s, bodies, json.loads(totals), steps)


def report_latency(times: dict[str, list[float]]) -> None:
    base = statistics.median(times["direct"])
    print(f"latency per call, {len(times['direct'])} calls each, one keep-alive client, interleaved:")
    for name, values in times.items():
        p50 = statistics.median(values)
        added = "" if name == "direct" else f"; added p50 {p50 - base:.3f} ms, {p50 / base:.2f}x the direct p50"
        print(f"  {name:36s} p50 {p50:.3f} ms, p90 {percentile(values, 0.9):.3f} ms, "
              f"p99 {percentile(values, 0.99):.3f} ms{added}")


def report_streams(args, direct_s: float, direct: list[str], gateway_s: float, through: list[str], totals: dict,
                   steps: list[str]) -> None:
    count, calls = args.streams, args.calls + 50
    whole = sum(map(complete, through))
    streamed = [json.loads(line)["data"] for line in steps[-count:]]
    counted = sum(d["tokens_out"] == OPENAI_USAGE[1] and d["stream"] for d in streamed)
    print(f"\nthe gateway's process used {totals['cpu_s'] * 1000 / totals['calls']:.3f} ms of CPU per call "
          "(its start excluded)")
    print(f"\n{count} concurrent streamed calls ({len(REPLY) + 3} events each, 20 ms apart), through the forwarder:")
    print(f"  direct {direct_s:.3f} s ({sum(map(complete, direct))} whole); through the gateway {gateway_s:.3f} s "
          f"({gateway_s / direct_s:.2f}x): {whole} of {count} whole, {counted} usages counted; "
          f"{totals['calls']} calls and {len(steps)} llm steps for {2 * calls + count} made; lost: {count - whole}")


if __name__ == "__main__":
    main()

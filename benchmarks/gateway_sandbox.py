"""What the LLM gateway adds to a call made from inside a real sandbox, against a direct call from the
host in the same run. A benchmark, not a test.

    DEBUG=true .venv/bin/python benchmarks/gateway_sandbox.py [--calls 300] [--runtime runc|runsc]

The scripted upstream and the gateway run in processes of their own on the host (as benchmarks/gateway.py
starts them); a container of the site's agent image with network `none`, the gateway's Unix socket
bind-mounted and the forwarder wrapping the client (what a job's sandbox is), makes `--calls` keep-alive
calls with the standard library's http.client and times each inside the container. The baseline is the
same client code run on the host straight to the upstream, before and after the others (so drift of
the machine's load shows in the two); between them, the same client on the host through the gateway's
TCP port, which tells the sandbox's share from the gateway's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gateway as bench  # noqa: E402 - sets up Django, as the gateway needs its settings
from django.conf import settings  # noqa: E402

from runner.backends.docker import AGENT_UID  # noqa: E402
from runner.gateway import SANDBOX_PORT, SANDBOX_SOCKET, environment  # noqa: E402

CLIENT = """
import http.client, json, os, sys, time
from urllib.parse import urlsplit
url = urlsplit(sys.argv[1])
calls, token = int(sys.argv[2]), sys.argv[3]
body = json.dumps(json.loads(sys.argv[4])).encode()
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
headers = {"content-type": "application/json", **({"authorization": "Bearer " + token} if token else {})}
times = []
for i in range(calls + 30):
    began = time.perf_counter()
    connection.request("POST", url.path + "/chat/completions", body=body, headers=headers)
    reply = connection.getresponse()
    reply.read()
    assert reply.status == 200, reply.status
    if i >= 30:  # warm-up
        times.append((time.perf_counter() - began) * 1000)
print(json.dumps(times))
"""


def on_host(base_url: str, calls: int, token: str = "") -> list[float]:
    done = subprocess.run([sys.executable, "-c", CLIENT, base_url, str(calls), token, json.dumps(bench.BODY)],
                          capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout)


def in_sandbox(folder: Path, token: str, calls: int, runtime: str) -> list[float]:
    base_url = environment(SANDBOX_PORT)["OPENAI_BASE_URL"]
    forwarder = ["python3", "/opt/medalboard/gateway_forwarder.py", "--port", str(SANDBOX_PORT),
                 "--socket", SANDBOX_SOCKET]
    command = ["docker", "run", "--rm", "--name", f"medalboard-bench-gateway-{uuid.uuid4().hex[:8]}",
               "--network", "none", "--runtime", runtime, "--read-only", "--user", f"{AGENT_UID}:{AGENT_UID}",
               "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
               "-v", f"{bench.FORWARDER.parent}:/opt/medalboard:ro",
               "-v", f"{folder / 'gateway.sock'}:{SANDBOX_SOCKET}", settings.MEDALBOARD_AGENT_IMAGE,
               *forwarder, "--", "python3", "-c", CLIENT, base_url, str(calls), token, json.dumps(bench.BODY)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def line(name: str, values: list[float], base: float | None) -> str:
    p50 = statistics.median(values)
    added = "" if base is None else f"; added p50 {p50 - base:.2f} ms, {p50 / base:.2f}x the direct p50"
    return (f"  {name:44s} p50 {p50:.2f} ms, p90 {bench.percentile(values, 0.9):.2f} ms, "
            f"p99 {bench.percentile(values, 0.99):.2f} ms{added}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--runtime", default="runc", help="the sandbox's OCI runtime: runc or runsc (gVisor)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="medalboard-bench-gateway-sandbox-"))
    folder.chmod(0o755)
    upstream, upstream_url = bench.spawn(bench.__file__, "--serve", log=folder / "upstream.log")
    gateway, port = bench.spawn(bench.__file__, "--serve", upstream_url, str(folder), str(folder / "token"),
                             log=folder / "gateway.log")
    token = (folder / "token").read_text()
    try:
        before = on_host(f"{upstream_url}/v1", args.calls)
        host_gateway = on_host(f"http://127.0.0.1:{port}/openai/v1", args.calls, token)
        sandboxed = in_sandbox(folder, token, args.calls, args.runtime)
        after = on_host(f"{upstream_url}/v1", args.calls)
    finally:
        gateway.communicate("", timeout=60)
        upstream.communicate("", timeout=60)
    base = statistics.median(before + after)
    print(f"{args.calls} keep-alive calls each (http.client), sandbox runtime {args.runtime}:")
    print(line("direct from the host, before", before, None))
    print(line("direct from the host, after", after, None))
    print(line("from the host: gateway on TCP", host_gateway, base))
    print(line("from the sandbox: forwarder + socket + gateway", sandboxed, base))


if __name__ == "__main__":
    main()

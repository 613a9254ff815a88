"""A job task's way to its LLM: the metered gateway (runner.gateway) between the sandbox and the
upstreams this runner is configured with, and what the sandbox gets for it.

A task gets a gateway when its job gave a provider key (OPENAI_API_KEY, ...) or the runner has
upstreams (a self-hosted model needs no key). Then the sandbox's environment holds the run's token in
place of every provider key (the real keys stay in the runner's memory), the providers' base-URL
variables point at the gateway, and:

- Docker: the gateway listens on a Unix socket alone in a folder of the runner's folder for the task,
  that folder bind-mounted read-only where SANDBOX_SOCKET lies (gVisor needs `--host-uds=open` in
  its runtime arguments to connect to it); the agent's command runs under the forwarder (runner/agent_tools/
  gateway_forwarder.py), which listens on 127.0.0.1:SANDBOX_PORT inside the sandbox, whose network
  stays `none`;
- local: the gateway listens on a free TCP port of 127.0.0.1.

Each call is an `llm` step in the runner's own llm.jsonl, streamed live by the supervisor beside the
agent's trajectory and appended to the final one; the run's tokens and cost are the gateway's sums
(Run.usage_metered).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from django.conf import settings

from leaderboard.runs.job_runs import to_count, to_float
from runner.backends import SandboxSpec
from runner.gateway import (
    SANDBOX_PORT,
    SANDBOX_SOCKET,
    SOCKET_FILE,
    STEPS_FILE,
    Gateway,
    Limits,
    RunKeys,
    environment,
    load_prices,
    split_secrets,
)

PYTHON = "/usr/bin/python3"  # the image's own Python, outside any environment the agent made


@dataclass
class LlmAccess:
    sandbox_secrets: dict[str, str]  # the job's secrets as the sandbox sees them
    keys: RunKeys | None = None  # None: this task gets no gateway
    limits: Limits | None = None
    gateway: Gateway | None = None


def prepare(job, secrets: dict[str, str]) -> LlmAccess:
    """Split the job's secrets, if the task gets a gateway; its limits checked now."""
    sandbox_secrets, keys = split_secrets(secrets)
    if not keys.real_keys() and not settings.LLM_UPSTREAMS:
        return LlmAccess(dict(secrets))
    try:
        limits = Limits.from_settings(job.settings)
    except ValueError as exc:
        raise RuntimeError(f"the job's LLM limits: {exc}") from None
    return LlmAccess(sandbox_secrets, keys, limits)


def start(access: LlmAccess, spec: SandboxSpec, backend_name: str, tools_dir: str) -> SandboxSpec:
    """Start the gateway for `spec` and return the spec the sandbox needs to reach it."""
    if access.keys is None:
        return spec
    spec.runner_dir.mkdir(parents=True, exist_ok=True)
    gateway = access.gateway = Gateway(keys=access.keys, prices=load_prices(), limits=access.limits,
                                       steps_path=spec.runner_dir / STEPS_FILE, started_at=time.time())
    if backend_name == "docker":
        folder = spec.runner_dir / "gateway"  # mounted whole: gVisor can bind folders, not sockets
        folder.mkdir(exist_ok=True)
        gateway.start(unix_path=folder / SOCKET_FILE)
        command = [PYTHON, f"{tools_dir}/gateway_forwarder.py", "--port", str(SANDBOX_PORT), "--socket",
                   SANDBOX_SOCKET, "--", *spec.command]
        return dataclasses.replace(spec, command=command, env={**spec.env, **environment(SANDBOX_PORT)},
                                   gateway_socket=folder / SOCKET_FILE)
    gateway.start(tcp_port=0)
    return dataclasses.replace(spec, env={**spec.env, **environment(gateway.port)})


def models_called(access: LlmAccess | None) -> dict[str, int]:
    """The models the gateway metered calls to (model -> calls); empty without a gateway."""
    return access.gateway.meter.models() if access is not None and access.gateway is not None else {}


def finish(access: LlmAccess) -> tuple[dict | None, str]:
    """Stop the gateway; its totals as the run's usage fields (None without a gateway) and what the
    job page should say about the run's LLM ("" when nothing needs saying)."""
    gateway = access.gateway
    if gateway is None:
        return None, ""
    gateway.stop()
    totals = gateway.totals()
    # Totals past what the run's columns hold (an upstream's counts are summed as it reports them) are
    # unknown rather than a database error that would lose the run's outputs.
    usage = {"tokens_in": to_count(totals.tokens_in), "tokens_out": to_count(totals.tokens_out), "usage_metered": True,
             # a call whose model has no price leaves the cost unknown rather than too low
             "cost_usd": None if totals.unpriced_calls else to_float(round(totals.cost_usd, 6))}
    notes = [gateway.status()]
    spent = gateway.meter.budget_refused()
    if spent:
        notes.append(f"the LLM gateway refused calls past the job's budget: {spent[1]}")
    if totals.unpriced_calls:
        notes.append(f"{totals.unpriced_calls} LLM calls were to models without a price: no cost recorded")
    return usage, "; ".join(n for n in notes if n)

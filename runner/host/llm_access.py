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
agent's trajectory and appended to the final one. At the end `finish` gives the meter's report (a
plain dict: the gateway's sums, its refusals, the models called), which the site turns into the run's
usage (runner.jobs.llm_usage). This module touches no database: a runner
attached by URL and token (runner.remote.llm, with the site's prices and the job's limits from its
claim) starts its gateway here.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings

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
    split_secrets,
)
from runner.gateway.prices import Price

PYTHON = "/usr/bin/python3"  # the image's own Python, outside any environment the agent made


@dataclass
class LlmAccess:
    sandbox_secrets: dict[str, str]  # the job's secrets as the sandbox sees them
    keys: RunKeys | None = None  # None: this task gets no gateway
    limits: Limits | None = None
    gateway: Gateway | None = None
    prices: dict[str, Price] | None = None


def prepare(job_settings: Mapping[str, Any], secrets: dict[str, str],
            prices: Callable[[], dict[str, Price]]) -> LlmAccess:
    """Split the job's secrets, if the task gets a gateway; its limits checked now, and its price
    table read (`prices()`: the site's table, as the runner can reach it)."""
    sandbox_secrets, keys = split_secrets(secrets)
    if not keys.real_keys() and not settings.LLM_UPSTREAMS:
        return LlmAccess(dict(secrets))
    try:
        limits = Limits.from_settings(job_settings)
    except ValueError as exc:
        raise RuntimeError(f"the job's LLM limits: {exc}") from None
    return LlmAccess(sandbox_secrets, keys, limits, prices=prices())


def start(access: LlmAccess, spec: SandboxSpec, backend_name: str, tools_dir: str) -> SandboxSpec:
    """Start the gateway for `spec` and return the spec the sandbox needs to reach it."""
    if access.keys is None:
        return spec
    spec.runner_dir.mkdir(parents=True, exist_ok=True)
    gateway = access.gateway = Gateway(keys=access.keys, prices=access.prices, limits=access.limits,
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


def finish(access: LlmAccess) -> dict[str, Any] | None:
    """Stop the gateway; the meter's report (None without a gateway): its sums as they are, the
    first refusal for the job's budget, what the job page should say of the runner's upstreams, and
    the models called (model -> calls). runner.jobs.llm_usage reads it, on the site."""
    gateway = access.gateway
    if gateway is None:
        return None
    gateway.stop()
    refused = gateway.meter.budget_refused()
    return {**gateway.totals().as_dict(), "status": gateway.status(), "budget_refused": refused[1] if refused else "",
            "models": gateway.meter.models()}


def budget_spent(gateway: Gateway | None, grace_s: float) -> str:
    """Why to stop the agent now ("" to let it go on): the gateway refused it a call for the job's
    budget, `grace_s` ago (the gateway's note on the task says which limit)."""
    refused = gateway.meter.budget_refused() if gateway is not None else None
    if refused is None or time.monotonic() - refused[0] < grace_s:
        return ""
    return f"stopped by the runner {grace_s:g} s after its LLM budget ran out"

"""The LLM gateway of a task on a remote runner (runner.host.llm_access), started
with what the claim answer says (the job's limits, the site's price table) and this runner's own
upstreams (MEDALBOARD_LLM_UPSTREAMS in its settings). The provider keys come among the job's secrets
in the claim, stay in this process's memory and go upstream only; the sandbox gets the run's token
and the gateway's address. Its steps stream with the agent's (runner.remote.task), and its meter's
report goes with the finish, where the site reads it (runner.jobs.llm_usage).

    gateway = RemoteLlm(claim)
    spec = gateway.start(spec, backend)        # GatewayFailed: the task fails, saying why
    ... gateway.budget_spent() ...             # why to stop the agent now, or ""
    report = gateway.finish(redactor)          # stopped: its file holds every step
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from runner.backends import Backend, SandboxSpec
from runner.host import llm_access
from runner.host.secrets import Redactor


class GatewayFailed(Exception):
    """The task's gateway cannot run as its job asks (a bad limit) or did not start."""


class RemoteLlm:
    def __init__(self, claim: dict) -> None:
        self.config = claim.get("llm") or {}
        self.env = dict(claim["sandbox"]["env"])  # the job's secrets among them
        self.access: llm_access.LlmAccess | None = None

    def start(self, spec: SandboxSpec, backend: Backend, adapt=None) -> SandboxSpec:
        """The spec with the provider keys replaced by the run's token and the gateway's address, once
        it listens; the spec as it is when the task gets no gateway. `adapt(spec)`: what the agent's
        packaging makes of the spec (runner.remote.agents), given the keys as the sandbox sees them and
        before the gateway's forwarder wraps its command."""
        prices = {pattern: tuple(price) for pattern, price in (self.config.get("prices") or {}).items()}
        try:
            self.access = llm_access.prepare(self.config.get("settings") or {}, self.env, prices=lambda: prices)
            spec = dataclasses.replace(spec, env={**spec.env, **self.access.sandbox_secrets})
        except (RuntimeError, OSError, ValueError) as exc:
            raise GatewayFailed(f"the LLM gateway: {exc}") from None
        if adapt is not None:
            spec = adapt(spec)
        try:
            return llm_access.start(self.access, spec, backend.name, backend.paths(spec).tools)
        except (RuntimeError, OSError, ValueError) as exc:
            self.stop()
            raise GatewayFailed(f"the LLM gateway: {exc}") from None

    def hidden(self) -> list[str]:
        """What the sandbox holds in the keys' place (the run's token): redacted like a secret. Only
        what replaced a value of the claim's env: the rest of it (COMPETITION_ID, SEED, ...) is no secret."""
        if self.access is None:
            return []
        return [value for name, value in self.access.sandbox_secrets.items() if self.env.get(name) != value]

    def agent_started(self, at: float | None = None) -> None:
        """The gateway's steps count from the agent's start, as the agent's own do: `at`, the start the
        site recorded (the run's one clock, which the agent's steps are put on too), or now."""
        if self.access is not None and self.access.gateway is not None:
            self.access.gateway.recorder.count_from(time.time() if at is None else at)

    def budget_spent(self) -> str:
        gateway = self.access.gateway if self.access is not None else None
        return llm_access.budget_spent(gateway, float(self.config.get("budget_grace_s", 5.0)))

    def finish(self, redactor: Redactor) -> dict[str, Any] | None:
        """Stop the gateway; the meter's report for the site, its texts redacted (None: no gateway)."""
        report = llm_access.finish(self.access) if self.access is not None else None
        if report is None:
            return None
        models = {redactor.text(model): calls for model, calls in report["models"].items()}
        return {
            **report,
            "status": redactor.text(report["status"]),
            "budget_refused": redactor.text(report["budget_refused"]),
            "models": models,
        }

    def stop(self) -> None:
        if self.access is not None and self.access.gateway is not None:
            self.access.gateway.stop()

"""The metered LLM gateway: the sandbox reaches its LLM through the runner, never the internet,
and never sees the real key. docs/gateway.md describes it; the runner's side is these few names:

    sandbox_env, keys = split_secrets(job_secrets)        # provider keys -> the run's token
    gateway = Gateway(keys=keys, prices=prices, limits=Limits.from_settings(job.settings),
                      steps_path=spec.runner_dir / STEPS_FILE, on_step=callback).start(
                      unix_path=spec.runner_dir / SOCKET_FILE)
    env = {**sandbox_env, **environment(SANDBOX_PORT)}     # and mount the socket at SANDBOX_SOCKET
    ...
    gateway.stop(); gateway.totals(); gateway.status()
"""

from runner.gateway.config import SANDBOX_PORT, SANDBOX_SOCKET, configured_upstreams, environment
from runner.gateway.keys import RunKeys, split_secrets
from runner.gateway.limits import Limits, Totals
from runner.gateway.prices import PriceTable
from runner.gateway.server import Gateway

SOCKET_FILE = "gateway.sock"  # in the runner's own folder for the task (SandboxSpec.runner_dir)
STEPS_FILE = "llm.jsonl"

__all__ = [
    "SANDBOX_PORT", "SANDBOX_SOCKET", "SOCKET_FILE", "STEPS_FILE", "Gateway", "Limits", "PriceTable", "RunKeys",
    "Totals", "configured_upstreams", "environment", "split_secrets",
]

"""Execution backends: one module per way of running an agent in a sandbox, behind `base.Backend`.

`get_backend(name)` returns the backend a runner was started with (`docker` or `local`).
"""

from __future__ import annotations

from runner.backends.base import (
    KILLED_OUTSIDE,
    OUT_OF_MEMORY,
    TOOLS_DIR,
    Backend,
    BackendUnavailable,
    ImageNotFound,
    Sandbox,
    SandboxPaths,
    SandboxSpec,
    StartFailed,
    sandbox_env,
)

__all__ = [
    "KILLED_OUTSIDE", "OUT_OF_MEMORY", "TOOLS_DIR",
    "Backend", "BackendUnavailable", "ImageNotFound", "Sandbox", "SandboxPaths", "SandboxSpec", "StartFailed",
    "get_backend", "sandbox_env",
]


def get_backend(name: str, runner_name: str = "", runtime: str = "") -> Backend:
    """The backend called `name` for the runner called `runner_name` (default: the one this process
    serves); a ValueError names the ones that exist. `runtime` is Docker's OCI runtime (default:
    MEDALBOARD_DOCKER_RUNTIME, else runc)."""
    if name == "local":
        from runner.backends.local import LocalBackend

        return LocalBackend(runner_name=runner_name)
    if name == "docker":
        from django.conf import settings

        from runner.backends.docker import DockerBackend

        return DockerBackend(runner_name=runner_name, runtime=runtime or settings.DOCKER_RUNTIME)
    raise ValueError(f"unknown execution backend {name!r}: use 'docker' or 'local'")

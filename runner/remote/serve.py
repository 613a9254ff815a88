"""A remote runner's loop: register its hardware, then claim a task (long-poll), run it, and again,
until stopped or its token is revoked.

A site that stays away is waited for with the client's backoff; a claim that fails that way is
tried again after a pause, so a runner outlives an outage of the site. A revoked token (401) ends the
loop: the running sandbox is stopped at once, and the site already handed its task back.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path

from runner import hardware
from runner.backends import Backend
from runner.client import ApiError, Revoked, SiteClient, SiteLost
from runner.remote.data import DataCache
from runner.remote.task import run_task

log = logging.getLogger(__name__)
CLAIM_WAIT_S = 20.0
OUTAGE_PAUSE_S = 5.0


def site_key(url: str) -> str:
    """Which site a sandbox belongs to, as its labels say it (never the URL itself)."""
    return hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]


def make_backend(name: str, *, runner_name: str, site: str, runtime: str = "") -> Backend:
    if name == "docker":
        from runner.backends.docker import DockerBackend

        return DockerBackend(runner_name=runner_name, runtime=runtime, site=site_key(site))
    from runner.backends.local import LocalBackend

    return LocalBackend(runner_name=runner_name, site=site_key(site))


def register(client: SiteClient, backend: Backend) -> dict:
    found = hardware.detect()
    return client.register(
        {
            "hostname": found.hostname,
            "gpus": found.gpus_json(),
            "cpu_count": found.cpu_count,
            "memory_gb": found.memory_gb,
            "backend": backend.name,
            "runtime": getattr(backend, "runtime", ""),
            "images": _images(backend),
        }
    )


def _images(backend: Backend) -> list[str]:
    if backend.name == "local":
        return ["*"]
    client = getattr(backend, "client", None)  # the Docker engine's
    if client is None:
        return []
    # The engine's listing in one call: images.list() inspects each image after listing them, and one
    # removed meanwhile (another runner, a build's clean-up on the host) raised ImageNotFound here.
    listed = client.api.images()
    return sorted({tag for image in listed for tag in image.get("RepoTags") or [] if tag != "<none>:<none>"})


def serve(
    client: SiteClient,
    backend: Backend,
    *,
    work_dir: Path,
    cache_dir: Path,
    stop: threading.Event,
    tasks: int = 0,
    prepared: Path | None = None,
    busy: threading.Event | None = None,
) -> str:
    """Serve until `stop` is set, the token is revoked ("revoked"), or `tasks` tasks ran (0: no end).
    `busy` is set while a task runs (between tasks the runner holds nothing the site would miss)."""
    busy = busy or threading.Event()
    while True:  # a site that is down when the runner starts is waited for, as during a task
        try:
            name = register(client, backend)["runner"]
            break
        except SiteLost as exc:
            log.warning("runner: %s; trying again", exc)
            if stop.wait(OUTAGE_PAUSE_S):
                return "stopped"
    cache, done = DataCache(cache_dir, prepared), 0
    backend.remove_stale()
    log.info("runner %s: registered; claiming tasks", name)
    while not stop.is_set() and (not tasks or done < tasks):
        try:
            claim = client.claim(CLAIM_WAIT_S)
        except Revoked:
            return "revoked"
        except SiteLost as exc:
            log.warning("runner %s: %s; trying again", name, exc)
            stop.wait(OUTAGE_PAUSE_S)
            continue
        if not claim:
            continue
        log.info("runner %s: task %s (%s, seed %s)", name, claim["task"], claim["competition"], claim["seed"])
        busy.set()
        try:
            outcome = run_task(client, claim, backend, work_dir=work_dir, cache=cache, runner_name=name)
            log.info("runner %s: task %s %s", name, claim["task"], outcome.status)
        except Revoked:
            log.warning("runner %s: token revoked; stopping", name)
            return "revoked"
        except (ApiError, SiteLost) as exc:  # the site handed it on, or will, or answered out of turn: the
            # task is abandoned (its lease runs out and the sweep hands it on), never the runner
            log.warning("runner %s: task %s abandoned: %s", name, claim["task"], exc)
        finally:
            busy.clear()
        done += 1
    return "stopped"

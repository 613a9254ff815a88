"""A remote runner's loop: register its hardware and its slots, then in each slot claim a task
(long-poll), run it, and again, until stopped or its token is revoked.

A site that stays away is waited for with the client's backoff; a claim that fails that way is
tried again after a pause, so a runner outlives an outage of the site. A revoked token (401) ends the
loop: the running sandbox is stopped at once, and the site already handed its task back. A sandbox
engine that is down (the Docker daemon) is waited for too: no slot claims while its check fails, and
a task claimed just before it went down is handed back to the site (runner.remote.task.EngineDown),
each time after a longer pause (ENGINE_BACKOFF_S); the site fails the task past its retries.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path

from runner.backends import Backend, BackendUnavailable
from runner.client import ApiError, Revoked, SiteClient, SiteLost
from runner.host import hardware
from runner.remote.data import DataCache
from runner.remote.task import EngineDown, run_task

log = logging.getLogger(__name__)
CLAIM_WAIT_S = 20.0
OUTAGE_PAUSE_S = 5.0
ENGINE_BACKOFF_S = (5.0, 10.0, 20.0, 40.0, 80.0, 160.0)  # an engine down: the pauses, the last one repeated


def site_key(url: str) -> str:
    """Which site a sandbox belongs to, as its labels say it (never the URL itself)."""
    return hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]


def make_backend(name: str, *, runner_name: str, site: str, runtime: str = "") -> Backend:
    if name == "docker":
        from runner.backends.docker import DockerBackend

        return DockerBackend(runner_name=runner_name, runtime=runtime, site=site_key(site))
    from runner.backends.local import LocalBackend

    return LocalBackend(runner_name=runner_name, site=site_key(site))


def register(client: SiteClient, backend: Backend, slots: int = 1) -> dict:
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
            "slots": slots,
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
    slots: int = 1,
    prepared: Path | None = None,
    busy: threading.Event | None = None,
) -> str:
    """Serve until `stop` is set, the token is revoked ("revoked"), or `tasks` tasks ran (0: no end),
    running up to `slots` tasks at once. `busy` is set while a task runs (between tasks the runner
    holds nothing the site would miss)."""
    while True:  # a site that is down when the runner starts is waited for, as during a task
        try:
            name = register(client, backend, slots)["runner"]
            break
        except SiteLost as exc:
            log.warning("runner: %s; trying again", exc)
            if stop.wait(OUTAGE_PAUSE_S):
                return "stopped"
    client.pool(slots)
    backend.remove_stale()
    log.info("runner %s: registered with %d slot(s); claiming tasks", name, slots)
    pool = Slots(client, backend, name, stop, tasks, busy or threading.Event())
    return pool.serve(slots, work_dir=work_dir, cache=DataCache(cache_dir, prepared))


class Slots:
    """The runner's slots: each a thread with its own claim and run loop, sharing the client, the
    backend, the data cache and the count of tasks. A revoked token ends every slot (a running one
    at its next call to the site, which answers 401 too); so does an error that kills one slot, which
    serve() raises once no slot runs a task."""

    def __init__(
        self, client: SiteClient, backend: Backend, name: str, stop: threading.Event, tasks: int, busy: threading.Event
    ) -> None:
        self.client, self.backend, self.name = client, backend, name
        self.stop, self.tasks, self.busy = stop, tasks, busy
        self.changed = threading.Condition()
        self.taken = self.running = self.alive = 0  # taken: claims asked for or made, for `tasks`
        self.engine_down = 0  # the engine's failures in a row, for the pause after the next one
        self.revoked, self.failed = False, None

    def serve(self, slots: int, **run_options) -> str:
        self.alive = slots
        for index in range(slots):
            threading.Thread(target=self._slot, kwargs=run_options, name=f"slot-{index}", daemon=True).start()
        with self.changed:  # a slot waiting in a long-poll claim is left to its daemon thread: it holds nothing
            self.changed.wait_for(lambda: not self.alive or (self._ending() and not self.running))
        if self.failed is not None:
            raise self.failed
        return "revoked" if self.revoked else "stopped"

    def _slot(self, **run_options) -> None:
        try:
            while self._take():
                self._claim_and_run(**run_options)
        except BaseException as exc:  # noqa: BLE001 - raised again by serve(), in its own thread
            self._note(failed=exc)
        finally:
            self._note(alive=-1)

    def _take(self) -> bool:
        """Whether this slot claims again: not stopped, not revoked, and `tasks` not all taken."""
        with self.changed:
            if self._ending() or (self.tasks and self.taken >= self.tasks):
                return False
            self.taken += 1
            return True

    def _ending(self) -> bool:
        """Stopped, revoked, or a slot died of an error: no slot claims again."""
        return self.stop.is_set() or self.revoked or self.failed is not None

    def _claim_and_run(self, *, work_dir: Path, cache: DataCache) -> None:
        try:
            self.backend.check()
        except BackendUnavailable as exc:  # no claim while the engine cannot start a sandbox
            self._note(taken=-1)
            self._engine_pause(f"{self.backend.name} unavailable: {exc}; not claiming")
            return
        try:
            claim = self.client.claim(CLAIM_WAIT_S)
        except Revoked:
            self._note(revoked=True)
            return
        except SiteLost as exc:
            log.warning("runner %s: %s; trying again", self.name, exc)
            self._note(taken=-1)
            self.stop.wait(OUTAGE_PAUSE_S)
            return
        if not claim:
            self._note(taken=-1)
            return
        log.info("runner %s: task %s (%s, seed %s)", self.name, claim["task"], claim["competition"], claim["seed"])
        self._note(running=1)
        try:
            outcome = run_task(self.client, claim, self.backend, work_dir=work_dir, cache=cache, runner_name=self.name)
            log.info("runner %s: task %s %s", self.name, claim["task"], outcome.status)
            self.engine_down = 0
        except EngineDown as exc:  # handed back: another claim (here or elsewhere) runs it, unless it failed
            self._note(taken=0 if exc.status == "failed" else -1)
            self._engine_pause(f"task {claim['task']} handed back ({exc.status}): {exc}")
        except Revoked:
            log.warning("runner %s: token revoked; stopping", self.name)
            self._note(revoked=True)
        except (ApiError, SiteLost) as exc:  # the site handed it on, or will, or answered out of turn: the
            # task is abandoned (its lease runs out and the sweep hands it on), never the runner
            log.warning("runner %s: task %s abandoned: %s", self.name, claim["task"], exc)
        finally:
            self._note(running=-1)

    def _engine_pause(self, why: str) -> None:
        with self.changed:
            pause = ENGINE_BACKOFF_S[min(self.engine_down, len(ENGINE_BACKOFF_S) - 1)]
            self.engine_down += 1
        log.warning("runner %s: %s; next try in %g s", self.name, why, pause)
        self.stop.wait(pause)

    def _note(self, *, taken: int = 0, running: int = 0, alive: int = 0, revoked: bool = False, failed=None) -> None:
        with self.changed:
            self.taken, self.running, self.alive = self.taken + taken, self.running + running, self.alive + alive
            self.revoked = self.revoked or revoked
            self.failed = self.failed or failed
            if self.running:
                self.busy.set()
            else:
                self.busy.clear()
            self.changed.notify_all()

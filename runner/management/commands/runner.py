"""`manage.py runner`: register this machine as a runner and serve jobs (a Celery worker underneath)."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from runner.backends import BackendUnavailable, StartFailed, get_backend
from runner.host.hardware import detect
from runner.host.scratch import clean_stale
from runner.jobs import registry
from runner.jobs.registry import held_elsewhere

log = logging.getLogger(__name__)
RESTART_S = (1, 2, 5, 10, 30)  # waits before restarting a worker that exited, growing while it keeps failing
HEALTHY_S = 60  # a worker that ran this long had a fresh start: the next restart waits the shortest time


def worker_command(runner, loglevel: str) -> list[str]:
    """The Celery worker of this runner, as its own process (the environment names the runner).

    Without gossip and mingle: nothing here uses worker-to-worker events, and Celery's gossip step
    fails to restart after a Redis outage (an AttributeError on a connection it dropped)."""
    return [sys.executable, "-m", "celery", "-A", "webapp", "worker", "--queues", ",".join(runner.queues),
            "--concurrency", str(runner.concurrency), "--loglevel", loglevel, "-O", "fair",
            "--without-gossip", "--without-mingle",
            "--hostname", f"runner-{runner.name}@{socket.gethostname()}"]


def supervise(command: list[str], name: str) -> None:
    """Run the worker and start it again whenever it exits on its own: Celery can exit on a broker
    outage (kombu failing to restore unacknowledged messages, a consumer that gives up), and nothing
    else would restart it. SIGTERM/SIGINT stop the worker (warm shutdown) and then this loop."""
    stopping = threading.Event()
    child: list[subprocess.Popen] = []

    def stop(_signum, _frame) -> None:
        stopping.set()
        if child and child[0].poll() is None:
            child[0].terminate()  # Celery's warm shutdown, whichever signal stopped this loop

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    failures = 0
    while not stopping.is_set():
        started = time.monotonic()
        child[:] = [subprocess.Popen(command)]
        code = child[0].wait()
        if stopping.is_set():
            break
        failures = 0 if time.monotonic() - started > HEALTHY_S else failures + 1
        wait = RESTART_S[min(failures, len(RESTART_S) - 1)]
        log.warning("runner %s: its worker exited with code %s; starting it again in %d s", name, code, wait)
        stopping.wait(wait)


class Command(BaseCommand):
    help = ("Start a runner: detect this machine's GPUs, CPUs and memory, register, and run a Celery worker "
            "on every job queue the hardware can serve (heartbeat and recovery sweep included). "
            "--drain NAME / --resume NAME switch a runner's intake off and on.")

    def add_arguments(self, parser):
        parser.add_argument("--backend", choices=["local", "docker"], default=os.environ.get(
            "MEDALBOARD_RUNNER_BACKEND", "local"))
        parser.add_argument("--runtime", default="", help="The Docker backend's OCI runtime: runc (Docker's default) "
                            "or runsc (gVisor), registered in the daemon's daemon.json (default: "
                            "MEDALBOARD_DOCKER_RUNTIME, else runc); recorded on the runner and on each run")
        parser.add_argument("--name", default="", help="Runner name (default: the host name)")
        parser.add_argument("--queues", nargs="*", help="Queues to consume (default: all the hardware serves)")
        parser.add_argument("--concurrency", type=int, default=0, help="Tasks at once (default: one per GPU)")
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument("--drain", metavar="NAME", help="Stop NAME taking new tasks (running ones finish)")
        parser.add_argument("--resume", metavar="NAME", help="Let a drained runner take tasks again")
        parser.add_argument("--register-only", action="store_true", help="Register and exit (no worker)")

    def handle(self, *args, backend, runtime, name, queues, concurrency, loglevel, drain, resume, register_only,
               **options):
        if drain or resume:
            target = drain or resume
            if not registry.set_draining(target, draining=bool(drain)):
                raise CommandError(f"no runner called {target!r}")
            self.stdout.write(f"runner {target} is {'draining' if drain else 'online'}")
            return
        if runtime and backend != "docker":
            raise CommandError(f"--runtime is an option of the docker backend, not {backend}")
        runner = self._register(backend, name or socket.gethostname(), queues, concurrency, runtime)
        if register_only:
            return
        os.environ["MEDALBOARD_RUNNER_NAME"] = runner.name
        os.environ["MEDALBOARD_RUNNER_BACKEND"] = runner.backend
        if runner.runtime:  # the worker's sandboxes use the runtime this runner registered with
            os.environ["MEDALBOARD_DOCKER_RUNTIME"] = runner.runtime
        log.info("runner %s: queues %s", runner.name, ",".join(runner.queues))
        supervise(worker_command(runner, loglevel), runner.name)

    def _register(self, backend_name, name, queues, concurrency, runtime=""):
        backend = get_backend(backend_name, runner_name=name, runtime=runtime)
        try:
            backend.check()
        except (BackendUnavailable, StartFailed) as exc:  # the daemon is down, or lacks the runtime asked for
            raise CommandError(f"the {backend_name} backend cannot run sandboxes: {exc}") from None
        removed = backend.remove_stale()
        cleaned = clean_stale(settings.RUNNER_WORK_DIR, keep=held_elsewhere(name))
        hardware = detect()
        runner = registry.register(
            name=name, backend=backend, hardware=hardware, queues=queues or registry.default_queues(hardware),
            concurrency=concurrency or registry.default_concurrency(hardware),
        )
        kind = f"{backend_name}, {runner.runtime}" if runner.runtime else backend_name
        gpus = ", ".join(f"{g.index}: {g.name} ({g.memory_mb} MiB)" for g in hardware.gpus) or "none"
        self.stdout.write(
            f"runner {runner.name} ({kind}) on {hardware.hostname}: GPUs {gpus}; {hardware.cpu_count} CPUs; "
            f"{hardware.memory_gb:g} GB; concurrency {runner.concurrency}; removed {removed} stale sandboxes "
            f"and {cleaned} stale scratch folders\n"
            f"queues: {', '.join(runner.queues)}\nimages: {', '.join(runner.images) or 'none'}"
        )
        return runner

"""`manage.py runner`: register this machine as a runner and serve jobs (a Celery worker underneath)."""

from __future__ import annotations

import logging
import os
import socket

from django.core.management.base import BaseCommand, CommandError

from runner import registry
from runner.backends import BackendUnavailable, get_backend
from runner.hardware import detect


class Command(BaseCommand):
    help = ("Start a runner: detect this machine's GPUs, CPUs and memory, register, and run a Celery worker "
            "on every job queue the hardware can serve (heartbeat and recovery sweep included). "
            "--drain NAME / --resume NAME switch a runner's intake off and on.")

    def add_arguments(self, parser):
        parser.add_argument("--backend", choices=["local", "docker"], default=os.environ.get(
            "MEDALBOARD_RUNNER_BACKEND", "local"))
        parser.add_argument("--name", default="", help="Runner name (default: the host name)")
        parser.add_argument("--queues", nargs="*", help="Queues to consume (default: all the hardware serves)")
        parser.add_argument("--concurrency", type=int, default=0, help="Tasks at once (default: one per GPU)")
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument("--drain", metavar="NAME", help="Stop NAME taking new tasks (running ones finish)")
        parser.add_argument("--resume", metavar="NAME", help="Let a drained runner take tasks again")
        parser.add_argument("--register-only", action="store_true", help="Register and exit (no worker)")

    def handle(self, *args, backend, name, queues, concurrency, loglevel, drain, resume, register_only, **options):
        if drain or resume:
            target = drain or resume
            if not registry.set_draining(target, draining=bool(drain)):
                raise CommandError(f"no runner called {target!r}")
            self.stdout.write(f"runner {target} is {'draining' if drain else 'online'}")
            return
        runner = self._register(backend, name or socket.gethostname(), queues, concurrency)
        if register_only:
            return
        os.environ["MEDALBOARD_RUNNER_NAME"] = runner.name
        os.environ["MEDALBOARD_RUNNER_BACKEND"] = runner.backend
        from webapp.celery import app

        logging.getLogger(__name__).info("runner %s: queues %s", runner.name, ",".join(runner.queues))
        app.Worker(queues=runner.queues, concurrency=runner.concurrency, loglevel=loglevel,
                   hostname=f"runner-{runner.name}@{socket.gethostname()}", optimization="fair").start()

    def _register(self, backend_name, name, queues, concurrency):
        backend = get_backend(backend_name)
        try:
            backend.check()
        except BackendUnavailable as exc:
            raise CommandError(f"the {backend_name} backend cannot run sandboxes: {exc}") from None
        removed = backend.remove_stale()
        hardware = detect()
        runner = registry.register(
            name=name, backend=backend, hardware=hardware, queues=queues or registry.default_queues(hardware),
            concurrency=concurrency or registry.default_concurrency(hardware),
        )
        gpus = ", ".join(f"{g.index}: {g.name} ({g.memory_mb} MiB)" for g in hardware.gpus) or "none"
        self.stdout.write(
            f"runner {runner.name} ({backend_name}) on {hardware.hostname}: GPUs {gpus}; {hardware.cpu_count} CPUs; "
            f"{hardware.memory_gb:g} GB; concurrency {runner.concurrency}; removed {removed} stale sandboxes\n"
            f"queues: {', '.join(runner.queues)}\nimages: {', '.join(runner.images) or 'none'}"
        )
        return runner

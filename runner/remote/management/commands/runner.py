"""`manage.py runner --site URL --token TOKEN`: a runner attached to a site over its runner API.

manage.py starts this command with runner.remote.settings (no database, no site secrets) whenever
`--site` or MEDALBOARD_SITE_URL is given; without them `manage.py runner` is the Celery runner."""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import threading
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from runner.client import SiteClient
from runner.remote.serve import make_backend, serve

MAX_SLOTS = 64  # as the site allows (runner.api_v1.claims.MAX_SLOTS)


class Command(BaseCommand):
    help = "Attach this machine to a site as a runner, with the site's URL and a runner token (no database)."
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("--site", default=settings.SITE_URL, help="The site's URL (MEDALBOARD_SITE_URL)")
        parser.add_argument(
            "--token",
            default=settings.RUNNER_TOKEN,
            help="The runner's token (MEDALBOARD_RUNNER_TOKEN; from manage.py create_runner on the site)",
        )
        parser.add_argument("--backend", choices=["local", "docker"], default="local")
        parser.add_argument("--runtime", default=settings.DOCKER_RUNTIME)
        parser.add_argument("--name", default=socket.gethostname(), help="Names its sandboxes on this host")
        parser.add_argument("--tasks", type=int, default=0, help="Exit after this many tasks (default: never)")
        parser.add_argument(
            "--slots",
            type=_slots,
            default=settings.RUNNER_SLOTS,
            help=f"Tasks run at once, 1 to {MAX_SLOTS} (MEDALBOARD_RUNNER_SLOTS; default 1)",
        )

    def handle(self, *args, site, token, backend, runtime, name, tasks, slots, **options):
        if not site or not token:
            raise CommandError("--site and --token (or MEDALBOARD_SITE_URL and MEDALBOARD_RUNNER_TOKEN) are needed")
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        client = SiteClient(site, token, lost_site_s=settings.LOST_SITE_S)
        sandboxes = make_backend(backend, runner_name=name, site=site, runtime=runtime)
        busy, result = threading.Event(), []
        serving_options = {
            "work_dir": settings.RUNNER_WORK_DIR,
            "cache_dir": settings.RUNNER_CACHE_DIR,
            "stop": stop,
            "tasks": tasks,
            "slots": slots,
            "prepared": Path(settings.RUNNER_PREPARED_DATA_DIR) if settings.RUNNER_PREPARED_DATA_DIR else None,
            "busy": busy,
        }

        def loop() -> None:
            try:
                result.append(serve(client, sandboxes, **serving_options))
            except BaseException as exc:  # noqa: BLE001 - raised again in the command's own thread
                result.append(exc)

        # The loop runs in a thread of its own, so that a stop while its slots wait in long-poll claims (up
        # to 20 s) ends the process at once: between tasks a slot holds nothing; a task that runs is finished.
        serving = threading.Thread(target=loop, daemon=True)
        serving.start()
        while serving.is_alive() and not (stop.wait(0.2) and not busy.is_set()):
            pass
        ended = result[0] if result else "stopped"
        if isinstance(ended, BaseException):
            raise ended
        self.stdout.write(f"runner: {ended}")
        if ended == "revoked":
            raise SystemExit(3)


def _slots(value: str) -> int:
    try:
        slots = int(value)
    except ValueError:
        slots = 0
    if not 1 <= slots <= MAX_SLOTS:
        raise argparse.ArgumentTypeError(f"a whole number from 1 to {MAX_SLOTS}, not {value!r}")
    return slots

"""`manage.py create_runner NAME`: a runner that attaches with the site's URL and a token; the token
is printed once (only its sha256 is kept). `--revoke NAME` revokes it: the runner stops within a
minute and its tasks go back to the queue. `--token-file PATH` writes the token into PATH (mode 0600)
instead of printing it: `make run` gives its loopback runner a new token so, with no human and no log."""

from __future__ import annotations

import os
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from runner.api_v1 import tokens
from runner.models import Runner


class Command(BaseCommand):
    help = "Create a runner token (shown once), or revoke one with --revoke"

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--revoke", action="store_true", help="Revoke the runner's token")
        parser.add_argument(
            "--token-file",
            type=Path,
            help="Write the new token into this file (mode 0600; "
            "replaced if it exists) instead of printing it; the runner's old token stops working",
        )

    def handle(self, *args, name, revoke, token_file=None, **options):
        if revoke:
            runner = Runner.objects.filter(name=name).first()
            if runner is None:
                raise CommandError(f"no runner called {name!r}")
            back = tokens.revoke(runner)
            self.stdout.write(f"runner {name}: token revoked; {back} task(s) back in the queue")
            return
        _, token = tokens.issue(name)
        if token_file is not None:
            write_private(token_file, token)
            self.stdout.write(f"runner {name}: a new token is in {token_file} (its old token no longer works)")
            return
        self.stdout.write(f"runner {name}: its token (shown only now; keep it like a password):\n{token}")
        self.stderr.write("attach a machine with: python manage.py runner --site https://THIS-SITE --token TOKEN")


def write_private(path: Path, text: str) -> None:
    """`text` into `path`, readable by this user only from the start (never a moment with wider modes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text + "\n")
    os.replace(partial, path)

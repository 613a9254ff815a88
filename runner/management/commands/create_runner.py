"""`manage.py create_runner NAME`: a runner that attaches with the site's URL and a token; the token
is printed once (only its sha256 is kept). `--revoke NAME` revokes it: the runner stops within a
minute and its tasks go back to the queue."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from runner.api_v1 import tokens
from runner.models import Runner


class Command(BaseCommand):
    help = "Create a runner token (shown once), or revoke one with --revoke"

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--revoke", action="store_true", help="Revoke the runner's token")

    def handle(self, *args, name, revoke, **options):
        if revoke:
            runner = Runner.objects.filter(name=name).first()
            if runner is None:
                raise CommandError(f"no runner called {name!r}")
            back = tokens.revoke(runner)
            self.stdout.write(f"runner {name}: token revoked; {back} task(s) back in the queue")
            return
        _, token = tokens.issue(name)
        self.stdout.write(f"runner {name}: its token (shown only now; keep it like a password):\n{token}")
        self.stderr.write("attach a machine with: python manage.py runner --site https://THIS-SITE --token TOKEN")

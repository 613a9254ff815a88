import json
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from runner.backends import BackendUnavailable, get_backend
from runner.research import environment


class Command(BaseCommand):
    help = (
        "Build the environment research tasks' starters and evals run in (MLAgentBench's requirements, "
        "runner/research/requirements/): its wheelhouse, and the venv (local backend) or the image FROM "
        "mlebench-env (Docker). A runner builds it at its first baseline otherwise; this does it ahead."
    )

    def add_arguments(self, parser):
        parser.add_argument("--backend", choices=["local", "docker"], default="local")
        parser.add_argument(
            "--flavour",
            choices=sorted(environment.FILES),
            help=f"default: MEDALBOARD_RESEARCH_ENVIRONMENT ({settings.RESEARCH_ENVIRONMENT})",
        )

    def handle(self, *args, backend, flavour, **options):
        flavour = flavour or settings.RESEARCH_ENVIRONMENT
        if flavour == "none":
            raise CommandError("MEDALBOARD_RESEARCH_ENVIRONMENT is none: name --flavour light or full")
        started = time.monotonic()
        try:
            sandbox_backend = get_backend(backend)
            built = (
                environment.local_venv(flavour)
                if backend == "local"
                else environment.docker_image(flavour, sandbox_backend.client)
            )
        except (environment.EnvironmentUnavailable, BackendUnavailable) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            json.dumps(
                {
                    "flavour": flavour,
                    "backend": backend,
                    "environment": str(built),
                    "seconds": round(time.monotonic() - started, 1),
                }
            )
        )

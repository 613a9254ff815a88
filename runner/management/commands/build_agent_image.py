import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from runner.agent_image import ImageBuildError, build
from runner.backends import BackendUnavailable


class Command(BaseCommand):
    help = (
        "Build the agent base image locally (debootstrap of Debian from this machine's apt mirror, then "
        "docker import); skipped if the tag exists."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tag", default=settings.MEDALBOARD_AGENT_IMAGE, help="image tag (default: %(default)s)")
        parser.add_argument("--force", action="store_true", help="rebuild even if the tag exists")

    def handle(self, *args, tag, force, **options):
        try:
            result = build(tag=tag, force=force, log=self.stderr.write)
        except (ImageBuildError, BackendUnavailable) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps(result))

import json

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = ("Build on this runner's Docker host the images of imported MLE-bench agents (these ids, or all), "
            "from the folders they were imported from; existing tags are kept.")

    def add_arguments(self, parser):
        parser.add_argument("ids", nargs="*", help="agent ids, e.g. aide aide/dev (default: all)")
        parser.add_argument("--force", action="store_true", help="rebuild images whose tag exists")

    def handle(self, *args, ids, force, **options):
        # The Docker SDK is imported when images are built, not when commands are listed
        from runner.agents.images import AgentBuildError
        from runner.agents.importer import build_images, packaged_variants, refresh_runner_images
        from runner.agents.mlebench import AgentFormatError
        from runner.backends import BackendUnavailable

        try:
            images = build_images(packaged_variants(ids), force=force, log=self.stderr.write)
        except (AgentFormatError, AgentBuildError, BackendUnavailable) as exc:
            raise CommandError(str(exc)) from exc
        refresh_runner_images()
        self.stdout.write(json.dumps(images))

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
        from runner.agents.importer import build_images, packaged_variants, record_builds
        from runner.agents.mlebench import AgentFormatError
        from runner.backends import BackendUnavailable
        from runner.jobs.registry import refresh_runner_images

        failures: dict[str, dict] = {}
        try:
            variants = packaged_variants(ids)
            images = build_images(variants, force=force, log=self.stderr.write, failures=failures)
        except (AgentFormatError, AgentBuildError, BackendUnavailable) as exc:
            raise CommandError(str(exc)) from exc
        record_builds(variants, failures)
        refresh_runner_images()
        self.stdout.write(json.dumps(images))
        if failures:
            raise CommandError(f"not built: {', '.join(sorted(failures))} (the others were); the reasons are above "
                               "and on each agent: a job naming it is refused with its reason")

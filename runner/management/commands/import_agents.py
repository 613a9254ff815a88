import json

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = ("Import agents packaged as MLE-bench packages them: every */config.yaml of PATH, each top-level "
            "key an agent id. Builds each agent's image on this Docker host unless --no-build.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="a folder laid out like MLE-bench's agents/")
        parser.add_argument("--no-build", action="store_true", help="store the agents without building images")
        parser.add_argument("--force-build", action="store_true", help="rebuild images whose tag exists")
        parser.add_argument("--replace", action="store_true",
                            help="take these agent ids from PATH though they were imported from another folder "
                                 "(that folder's other agents are removed)")

    def handle(self, *args, path, no_build, force_build, replace, **options):
        # The Docker SDK is imported when agents are imported, not when commands are listed
        from runner.agents.images import AgentBuildError
        from runner.agents.importer import import_agents
        from runner.agents.mlebench import AgentFormatError
        from runner.backends import BackendUnavailable
        from runner.jobs.registry import refresh_runner_images

        try:
            report = import_agents(path, build=not no_build, force_build=force_build, replace=replace,
                                   log=self.stderr.write)
        except (AgentFormatError, AgentBuildError, BackendUnavailable) as exc:
            raise CommandError(f"nothing imported: {exc} (--no-build imports without building)") from exc
        if not no_build:
            refresh_runner_images()  # the runner on this Docker host now has these images
        for line in report.summary():
            self.stderr.write(line)
        self.stdout.write(json.dumps(report.__dict__))

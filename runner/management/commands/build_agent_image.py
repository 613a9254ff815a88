import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from runner.backends import BackendUnavailable
from runner.host.agent_image import AGENT, ImageBuildError, build


class Command(BaseCommand):
    help = (
        "Build the agent base image locally (debootstrap of Debian from this machine's apt mirror, then "
        "docker import); skipped if the tag exists. --mlebench-env builds the base MLE-bench agents start FROM."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tag", help=f"image tag (default: {settings.MEDALBOARD_AGENT_IMAGE}, or "
                                          "mlebench-env with --mlebench-env)")
        parser.add_argument("--force", action="store_true", help="rebuild even if the tag exists")
        parser.add_argument("--mlebench-env", action="store_true",
                            help="build `mlebench-env`, the base of agents packaged as MLE-bench packages them")
        parser.add_argument("--flavour", default="light", help="with --mlebench-env: `full` (MLE-bench's system "
                            "packages and pinned requirements, torch and TensorFlow included) or `light` (a subset "
                            "of the same pins, for tests; the default)")
        parser.add_argument("--record", action="store_true", help="with --mlebench-env: copy the image's pip "
                            "freeze, dpkg list, id and size into runner/agents/recorded/mlebench-env-FLAVOUR/ "
                            "(data the recipe tests check against MLE-bench's pins)")

    def handle(self, *args, tag, force, mlebench_env, flavour, record, **options):
        if record and not mlebench_env:
            raise CommandError("--record needs --mlebench-env")
        if mlebench_env:
            from runner.agents import base_image

            try:
                recipe, tag = base_image.recipe(flavour), tag or base_image.TAG
            except ImageBuildError as exc:
                raise CommandError(str(exc)) from exc
        else:
            recipe, tag = AGENT, tag or settings.MEDALBOARD_AGENT_IMAGE
        try:
            result = build(tag=tag, force=force, log=self.stderr.write, recipe=recipe)
            if record:
                from runner.agents import base_image

                result["recorded"] = str(base_image.record(tag, result))
        except (ImageBuildError, BackendUnavailable) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps(result))

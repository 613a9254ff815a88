"""manage.py bump_competition_version SLUG --note "what changed": mark a competition's version as changed."""

from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Competition
from leaderboard.trust.versions import VersionError, bump_version


class Command(BaseCommand):
    help = ("Raise a competition's version (e.g. after fixing a leaky split): runs keep the version they were "
            "graded on, and the leaderboard never averages results of different versions together.")

    def add_arguments(self, parser):
        parser.add_argument("slug", help="The competition's id, e.g. spaceship-titanic")
        parser.add_argument("--note", required=True, help="What changed (shown on the competition page)")

    def handle(self, *args, **options):
        competition = Competition.objects.filter(slug=options["slug"]).first()
        if competition is None:
            raise CommandError(f"no competition {options['slug']!r}")
        try:
            made = bump_version(competition=competition, note=options["note"])
        except VersionError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{competition.slug} is now version {made.version}")

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Competition, Run
from leaderboard.trust import similarity


class Command(BaseCommand):
    help = ("Fingerprint the code of every run (or one competition's) and compare it with the other runs of its "
            "competition and its reference code, oldest run first, so each pair is found when its newer run "
            "is indexed and flagged on it. Runs a runner is still working on are left out.")

    def add_arguments(self, parser):
        parser.add_argument("--competition", help="Only this competition's runs, e.g. spaceship-titanic")

    def handle(self, *args, competition=None, **options):
        runs = Run.objects.exclude(competition=None).exclude(status=Run.Status.RUNNING)
        if competition:
            if not Competition.objects.filter(slug=competition).exists():
                raise CommandError(f"unknown competition {competition!r}")
            runs = runs.filter(competition__slug=competition)
        done = flagged = 0
        for run in runs.order_by("created_at", "pk").iterator():
            kept = similarity.index_run(run)
            done += 1
            flagged += any(c.similarity >= settings.SIMILARITY_THRESHOLD for c in kept)
            if kept:
                best = max(kept, key=lambda c: c.similarity)
                other = f"run {best.run}" if best.run else f"reference {best.reference}"
                self.stdout.write(f"run {run.pk}: closest {other} ({best.similarity:.0%})")
        self.stdout.write(f"Indexed {done} run(s); {flagged} with a pair above the threshold")


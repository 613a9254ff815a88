import time

from django.core.management.base import BaseCommand

from leaderboard.analysis.aggregates import maintenance


class Command(BaseCommand):
    help = ("Recompute the leaderboard aggregates (one row per experiment, split, seed and audience) from "
            "the runs. Every run change keeps them up to date; this is for after writing runs around Django "
            "(raw SQL, a restored dump) or to check them.")

    def handle(self, *args, **options):
        started = time.perf_counter()
        n = maintenance.rebuild()
        self.stdout.write(f"Rebuilt {n} leaderboard aggregate row(s) in {time.perf_counter() - started:.1f} s")

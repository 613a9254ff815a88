from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Competition
from leaderboard.runs.regrading import regrade, runs_to_regrade


class Command(BaseCommand):
    help = ("Grade the runs that wait for answers (after import_competitions --data-dir registered them); "
            "--failed also retries runs whose grading failed.")

    def add_arguments(self, parser):
        parser.add_argument("--competition", help="Only this competition's runs, e.g. spaceship-titanic")
        parser.add_argument("--failed", action="store_true", help="Also retry runs whose grading failed")

    def handle(self, *args, competition=None, failed=False, **options):
        if competition and not Competition.objects.filter(slug=competition).exists():
            raise CommandError(f"unknown competition {competition!r}")
        run_ids = list(runs_to_regrade(competition=competition, include_failed=failed).values_list("id", flat=True))
        outcome = regrade(run_ids=run_ids)
        for run_id, status in outcome.items():
            self.stdout.write(f"run {run_id}: {status}")
        counts = {status: list(outcome.values()).count(status) for status in set(outcome.values())}
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "nothing to grade"
        self.stdout.write(f"Regraded {len(outcome)} run(s): {summary}")

from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Competition, Run
from leaderboard.trust.review import review_run


class Command(BaseCommand):
    help = ("Scan runs again with every rule check (and the LLM judge, if one is configured), here and now: "
            "after a check changed, or for runs that came in before the checks existed. Staff decisions stay.")

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, action="append", dest="runs", help="This run (repeatable)")
        parser.add_argument("--competition", help="Only this competition's runs, e.g. spaceship-titanic")

    def handle(self, *args, runs=None, competition=None, **options):
        selected = Run.objects.order_by("pk")
        if competition:
            if not Competition.objects.filter(slug=competition).exists():
                raise CommandError(f"unknown competition {competition!r}")
            selected = selected.filter(competition__slug=competition)
        if runs:
            selected = selected.filter(pk__in=runs)
        flagged = 0
        for run_id in selected.values_list("pk", flat=True).iterator():
            found = review_run(run_id)
            flagged += bool(found)
            if found:
                self.stdout.write(f"run {run_id}: " + ", ".join(f"{f.check_name} ({f.status})" for f in found))
        self.stdout.write(f"Scanned {selected.count()} run(s); {flagged} with findings")

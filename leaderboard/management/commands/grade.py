import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Competition


class Command(BaseCommand):
    help = ("Grade one submission CSV of a competition and print the grading report as JSON; "
            "exits 1 when the submission could not be scored (the report says why).")

    def add_arguments(self, parser):
        parser.add_argument("competition", help="Competition id, e.g. spooky-author-identification")
        parser.add_argument("submission", help="Path to the submission CSV")
        parser.add_argument("--answers", help="Private answers CSV (default: the competition's registered answers)")

    def handle(self, *args, competition, submission, answers=None, **options):
        from leaderboard.grading import grade_submission  # pandas and the metrics: when a file is graded

        try:
            target = Competition.objects.get(slug=competition)
        except Competition.DoesNotExist:
            raise CommandError(f"unknown competition {competition!r}") from None
        report = grade_submission(target, Path(submission), Path(answers) if answers else None)
        self.stdout.write(json.dumps(report.to_dict(), indent=2))
        if report.error:  # scripts and CI must see the failure, with the report above for the reason
            raise CommandError(report.error, returncode=1)

from django.conf import settings
from django.core.management.base import BaseCommand

from leaderboard.grading.table import grading_table


class Command(BaseCommand):
    help = ("Print docs/grading.md: per catalogue competition, its metric, row alignment, how values are read and "
            "the known differences from MLE-bench and Kaggle, generated from the grader specs.")

    def handle(self, *args, **options):
        competitions = settings.CATALOGUE_DIR / "competitions"
        ids = [folder.name for folder in competitions.iterdir() if (folder / "config.yaml").is_file()]
        self.stdout.write(grading_table(ids), ending="")

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from leaderboard.competitions.catalogue import CatalogueError, import_catalogue


class Command(BaseCommand):
    help = "Import MLE-bench competitions (configs, descriptions, Kaggle leaderboards, splits)."

    def add_arguments(self, parser):
        parser.add_argument("directory", nargs="?", help="Catalogue directory (default: MEDALBOARD_CATALOGUE_DIR)")
        parser.add_argument(
            "--data-dir",
            help="MLE-bench data root holding <id>/prepared/private/...: registers each competition's answers",
        )

    def handle(self, *args, directory=None, data_dir=None, **options):
        directory = Path(directory or settings.CATALOGUE_DIR)
        if not directory.is_dir():
            raise CommandError(f"{directory}: catalogue directory not found")
        try:
            summary = import_catalogue(directory, Path(data_dir) if data_dir else None)
        except CatalogueError as exc:
            raise CommandError(f"nothing imported: {exc}") from None
        self.stdout.write(
            f"Imported {summary.competitions} competitions, {summary.leaderboards} leaderboards "
            f"({summary.human_scores} human teams), splits: "
            + ", ".join(f"{slug} ({n})" for slug, n in summary.splits.items())
        )
        if summary.skipped:
            self.stderr.write("Not imported, the id is a research task's (remove the task first to import the "
                              "competition): " + ", ".join(summary.skipped))
        if summary.without_leaderboard:
            self.stdout.write("No human baseline: " + ", ".join(summary.without_leaderboard))

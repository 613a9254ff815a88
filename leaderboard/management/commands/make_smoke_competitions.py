"""Build the smoke competitions (leaderboard/competitions/smoke.py) and import them, catalogue and data, in one go."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from leaderboard.competitions.catalogue import CatalogueError, import_catalogue


class Command(BaseCommand):
    help = ("Build small competitions from scikit-learn's bundled data sets in MLE-bench's prepared layout "
            "(with a 'smoke' split and reference leaderboards) and import them. Idempotent.")

    def add_arguments(self, parser):
        parser.add_argument("--root", default=str(settings.VAR_DIR / "smoke"),
                            help="where to write them (default: var/smoke/)")

    def handle(self, *args, root: str, **options):
        from leaderboard.competitions import smoke  # scikit-learn: imported when the command runs, not listed

        root = Path(root).resolve()
        changed = smoke.build(root)
        try:
            summary = import_catalogue(root, data_dir=root / "data")
        except CatalogueError as exc:
            raise CommandError(f"nothing imported: {exc}") from None
        self.stdout.write(f"Smoke competitions in {root} ({changed} files written): "
                          + ", ".join(c.slug for c in smoke.COMPETITIONS)
                          + f"; imported {summary.competitions}, split smoke ({summary.splits.get(smoke.SPLIT, 0)})")

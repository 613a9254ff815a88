"""Write the research tasks (leaderboard/competitions/research_tasks.py) in MLAgentBench's layout."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from leaderboard.competitions import research_tasks


class Command(BaseCommand):
    help = ("Write research tasks built from scikit-learn's bundled data sets in MLAgentBench's layout "
            "(OUT/<task>/env/ and OUT/<task>/scripts/, plus OUT/tasks.json with each task's metric direction), "
            "ready for import_research_tasks. Deterministic and idempotent.")

    def add_arguments(self, parser):
        parser.add_argument("out", nargs="?", default=str(settings.VAR_DIR / "research"),
                            help="where to write them (default: var/research/)")

    def handle(self, *args, out: str, **options):
        root = Path(out).resolve()
        changed = research_tasks.build(root)
        lower = [t.slug for t in research_tasks.TASKS if t.lower_is_better]
        self.stdout.write(f"Research tasks in {root} ({changed} files written): "
                          + ", ".join(t.slug for t in research_tasks.TASKS)
                          + f"; lower is better: {', '.join(lower) or 'none'}")

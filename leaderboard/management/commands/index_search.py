from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand
from django.db.models import Count

from leaderboard.models import Trajectory
from leaderboard.search.index import index_trajectory
from leaderboard.trajectories.store import StoredTrajectory


class Command(BaseCommand):
    help = ("Build the cross-run search rows (one per step) of each stored trajectory that lacks them: "
            "runs stored before search existed. Imports keep them in step afterwards. --all rebuilds every run's.")

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="rebuild every trajectory's rows, not only missing ones")

    def handle(self, *args, **options):
        built = 0
        trajectories = Trajectory.objects.annotate(rows=Count("search_rows")).only("id", "run_id", "file", "n_steps")
        for trajectory in trajectories.iterator():
            current = trajectory.rows == trajectory.n_steps and not options["all"]
            if current or not default_storage.exists(trajectory.file):
                continue
            count = index_trajectory(trajectory, StoredTrajectory(trajectory, run_id=trajectory.run_id).steps())
            built += 1
            self.stdout.write(f"run {trajectory.run_id}: {count} steps indexed for search")
        self.stdout.write(f"Indexed {built} run(s) for search")

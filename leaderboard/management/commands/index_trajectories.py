from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand

from leaderboard.models import Run, Trajectory
from leaderboard.trajectories.store import StoredTrajectory, search_index


class Command(BaseCommand):
    help = ("Build the search index of each stored trajectory that has none (written before indexes "
            "existed). Runs a runner is still working on are left out: their file still grows, and their "
            "final import writes the index. Searches without an index still work, by a bounded scan.")

    def handle(self, *args, **options):
        built = 0
        trajectories = Trajectory.objects.exclude(run__status=Run.Status.RUNNING).select_related("run")
        for trajectory in trajectories.iterator():
            name = search_index.index_name(trajectory.file)
            if default_storage.exists(name) or not default_storage.exists(trajectory.file):
                continue
            search_index.build(default_storage, trajectory.file, StoredTrajectory(trajectory).blocks)
            built += 1
            self.stdout.write(f"run {trajectory.run_id}: indexed {trajectory.n_steps} steps")
        self.stdout.write(f"Built {built} search index(es)")

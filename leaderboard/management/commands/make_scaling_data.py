from django.core.management.base import BaseCommand, CommandError

from leaderboard.analysis import scaling_data
from leaderboard.models import Split


class Command(BaseCommand):
    help = ("Create the SYNTHETIC speed data set for the scaling curves (agents named synthetic-...; grades "
            "drawn from a seeded generator, no files): by default 100 experiments x the 75 competitions of "
            "'all' x 8 seeds x 4 snapshots.")

    def add_arguments(self, parser):
        parser.add_argument("--experiments", type=int, default=100)
        parser.add_argument("--split", default="all")
        parser.add_argument("--seeds", type=int, default=8)
        parser.add_argument("--snapshots", type=int, default=4)
        parser.add_argument("--time-limit-hours", type=float, default=24.0)
        parser.add_argument("--seed", type=int, default=0, help="random seed: the same seed gives the same data")
        parser.add_argument("--clear", action="store_true", help="delete the synthetic data set instead")

    def handle(self, *args, **o):
        if o["clear"]:
            self.stdout.write(f"deleted {scaling_data.clear()} synthetic experiments")
            return
        if min(o["experiments"], o["seeds"], o["snapshots"]) < 1:
            raise CommandError("--experiments, --seeds and --snapshots must be at least 1")
        try:
            made = scaling_data.make(experiments=o["experiments"], split=o["split"], seeds=o["seeds"],
                                     snapshots=o["snapshots"], time_limit_hours=o["time_limit_hours"], seed=o["seed"])
        except Split.DoesNotExist:
            raise CommandError(f"unknown split {o['split']!r}") from None
        self.stdout.write(f"created {made.experiments} synthetic experiments, {made.runs} runs, "
                          f"{made.snapshots} snapshots (labelled synthetic)")

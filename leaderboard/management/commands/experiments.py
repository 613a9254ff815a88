"""Staff tools for experiment ownership: transfer one to another owner, or merge several.

    python manage.py experiments transfer 12 --to user:alice      # or team:deepmind-lab, or none
    python manage.py experiments merge 12 15 --into 9
"""

from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Experiment
from leaderboard.runs.ownership import OwnershipError, merge_experiments, parse_owner, transfer_experiment


class Command(BaseCommand):
    help = "Transfer experiments to another owner (user, team or none) or merge experiments."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        transfer = sub.add_parser("transfer", help="give an experiment to another owner")
        transfer.add_argument("experiment", type=int)
        transfer.add_argument("--to", required=True, help="user:<name>, team:<name> or none")
        merge = sub.add_parser("merge", help="move the runs of experiments into another and delete them")
        merge.add_argument("experiments", type=int, nargs="+")
        merge.add_argument("--into", type=int, required=True)

    def handle(self, *args, **options):
        try:
            if options["action"] == "transfer":
                experiment = transfer_experiment(experiment=_get(options["experiment"]),
                                                 owner=parse_owner(options["to"]))
                self.stdout.write(f"experiment {experiment.pk} now belongs to {experiment.owner_label or 'nobody'}")
            else:
                target = merge_experiments(sources=[_get(pk) for pk in options["experiments"]],
                                           target=_get(options["into"]))
                self.stdout.write(f"merged into experiment {target.pk} ({target.runs.count()} runs)")
        except OwnershipError as exc:
            raise CommandError(str(exc)) from None


def _get(pk: int) -> Experiment:
    try:
        return Experiment.objects.get(pk=pk)
    except Experiment.DoesNotExist:
        raise CommandError(f"no experiment {pk}") from None

"""Who owns an experiment, and how staff move results between owners.

An experiment belongs to one owner: a user, a team the uploader belongs to, or nobody (catalogue,
demo and published data). Runs of different owners never share an experiment, so nobody can join
another team's results by typing their agent and model names. Staff can transfer an experiment to
another owner and merge experiments (the admin's actions and `manage.py experiments`).
Who may SEE an experiment follows from its runs: `Experiment.objects.visible_to(user)`.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from leaderboard.models import Experiment, Team, owner_key


class OwnershipError(Exception):
    """A merge or transfer that cannot be done; the message says why."""


@transaction.atomic
def merge_experiments(*, sources: list[Experiment], target: Experiment) -> Experiment:
    """Move every run of `sources` into `target` and delete the emptied sources."""
    others = [e for e in sources if e.pk != target.pk]
    for source in others:
        source.runs.update(experiment=target)
        source.delete()
    return target


@transaction.atomic
def transfer_experiment(*, experiment: Experiment, owner) -> Experiment:
    """Give the experiment to another owner (a user, a Team or None). When that owner already has an
    experiment of the same configuration, the runs join it instead (a merge); a reproduction stays its
    own experiment, since only the unique constraint's experiments (no `reproduces`) can collide."""
    twin = None if experiment.reproduces_id is not None else _twin(experiment, owner)
    if twin is not None:
        return merge_experiments(sources=[experiment], target=twin)
    experiment.team = owner if isinstance(owner, Team) else None
    experiment.owner = None if owner is None or isinstance(owner, Team) else owner
    experiment.owner_key = owner_key(owner)
    experiment.save()
    return experiment


def _twin(experiment: Experiment, owner) -> Experiment | None:
    return (Experiment.objects.select_for_update()
            .filter(agent=experiment.agent_id, model=experiment.model_id, hardware=experiment.hardware,
                    time_limit_hours=experiment.time_limit_hours, settings_hash=experiment.settings_hash,
                    internet=experiment.internet, test_signal=experiment.test_signal, owner_key=owner_key(owner),
                    reproduces=None)
            .exclude(pk=experiment.pk).first())


def parse_owner(spec: str):
    """`user:<name>`, `team:<name>` or `none` as the owner it names."""
    kind, _, name = spec.partition(":")
    if spec == "none":
        return None
    if kind == "user":
        found = get_user_model().objects.filter(username=name).first()
    elif kind == "team":
        found = Team.objects.filter(name=name).first()
    else:
        raise OwnershipError(f"say user:<name>, team:<name> or none, not {spec!r}")
    if found is None:
        raise OwnershipError(f"no {kind} named {name!r}")
    return found

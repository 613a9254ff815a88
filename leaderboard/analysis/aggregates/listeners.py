"""The aggregates follow the models: the run keys a write announces (leaderboard.models.changes) and a split's
competitions changing are refreshed in the writing transaction. Connected in LeaderboardConfig.ready."""

from __future__ import annotations

from django.db.models.signals import m2m_changed

from leaderboard.analysis.aggregates import maintenance
from leaderboard.models import Competition, Split, changes


def connect() -> None:
    changes.run_keys_changed.connect(_run_keys_changed, dispatch_uid="aggregates-run-keys")
    m2m_changed.connect(
        _split_membership_changed, sender=Competition.splits.through, dispatch_uid="aggregates-split-membership"
    )


def _run_keys_changed(sender, keys, **kwargs) -> None:
    maintenance.refresh(keys)


def _split_membership_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    """A split's competitions changed: the aggregates of the runs in those competitions follow."""
    if action == "pre_clear":
        instance._cleared_competitions = (
            list(instance.competitions.values_list("pk", flat=True)) if isinstance(instance, Split) else [instance.pk]
        )
    elif action == "post_clear":
        maintenance.split_membership_changed(getattr(instance, "_cleared_competitions", []))
    elif action in ("post_add", "post_remove") and pk_set:
        maintenance.split_membership_changed(pk_set if isinstance(instance, Split) else [instance.pk])

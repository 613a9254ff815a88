"""The one announcement the models make: which (experiment id, seed) keys a write of runs changed.

Every way Django writes runs (Run.save and delete, and the RunQuerySet's update, delete, bulk_create and
bulk_update) sends `run_keys_changed` inside its own transaction, with the keys whose graded runs were
added, removed or changed. The leaderboard aggregates listen (leaderboard.analysis.aggregates.listeners,
connected in LeaderboardConfig.ready), so the models import nothing above them. A write that touches
none of COUNTED_FIELDS changes no aggregate and announces nothing (it skips the extra reads too)."""

from __future__ import annotations

from collections.abc import Iterable

from django.dispatch import Signal

FLAGS = ("gold_medal", "silver_medal", "bronze_medal", "above_median", "valid_submission", "any_medal")
# What a run contributes to the aggregates; a change to any of these (or to its status) can change them.
COUNTED_FIELDS = frozenset(
    {
        "experiment",
        "experiment_id",
        "competition",
        "competition_id",
        "seed",
        "status",
        "is_private",
        "verification",
        *FLAGS,
        "cost_usd",
        "tokens_in",
        "tokens_out",
        "usage_metered",
        "is_demo",
        "created_at",
        "competition_version",
    }
)

# sent with keys=[(experiment_id, seed), ...] (repeats allowed), inside the writing transaction
run_keys_changed = Signal()


def announce(keys: Iterable[tuple[int, int]]) -> None:
    """Say that these keys changed (its receivers run now, in the caller's transaction)."""
    run_keys_changed.send(sender=None, keys=list(keys))

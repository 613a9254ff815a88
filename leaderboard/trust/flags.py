"""The leaderboard's flag: how many of an experiment's runs on a split carry an open or confirmed
finding (a dismissed one does not count). One query per board, whatever the number of rows, read
inside the cached computation (a finding's change raises the leaderboard version: review and
decisions bump it), with the same audience the row's numbers count."""

from __future__ import annotations

from django.db.models import Count, Q

from leaderboard.analysis.aggregates.models import Audience
from leaderboard.models import Run, Split
from leaderboard.trust.models import COUNTED_STATUSES


def flagged_runs(*, experiment_ids: list[int], split: Split, audience: Audience, user=None,
                 own: set[int] = frozenset()) -> dict[int, int]:
    """{experiment id: graded runs of the split's competitions with a counted finding} for the rows."""
    if not experiment_ids:
        return {}
    runs = Run.objects.filter(experiment_id__in=experiment_ids, status=Run.Status.GRADED,
                              competition__splits=split, findings__status__in=COUNTED_STATUSES)
    if audience in (Audience.PUBLIC, Audience.PUBLIC_VERIFIED):  # plus the viewer's own private runs
        visible = Q(is_private=False)
        if own and user is not None:
            visible |= Q(owner=user, experiment_id__in=own)
        runs = runs.filter(visible)
    if audience in (Audience.PUBLIC_VERIFIED, Audience.ALL_VERIFIED):
        runs = runs.filter(verification=Run.Verification.VERIFIED)
    return dict(runs.order_by().values("experiment_id").annotate(n=Count("id", distinct=True))
                .values_list("experiment_id", "n"))

"""A run's closest matches as a reader may see them: one query over the pairs kept from both sides,
the other run filtered by visibility in the same query (a private run the reader cannot see is
never named, not even by id)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from leaderboard.models import Run
from leaderboard.trust.similarity.models import CodeMatch, ReferenceCode

SHOWN = 10


@dataclass(frozen=True)
class Match:
    similarity: float
    shared: int
    run: Run | None = None
    reference: ReferenceCode | None = None


def matches_for(run: Run, user, limit: int = SHOWN) -> list[Match]:
    """The run's closest runs and reference files, best first, at most `limit` of each kind."""
    visible = Run.objects.visible_to(user).values("pk")
    rows = (CodeMatch.objects
            .filter(Q(run=run, other__in=visible) | Q(other=run, run__in=visible) | Q(run=run, reference__isnull=False))
            .select_related("run__experiment__agent", "run__experiment__model",
                            "other__experiment__agent", "other__experiment__model", "reference")
            .order_by("-similarity", "pk")[: 2 * limit])
    runs, references, seen = [], [], set()
    for m in rows:
        if m.reference is not None:
            references.append(Match(m.similarity, m.shared, reference=m.reference))
            continue
        other = m.other if m.run_id == run.pk else m.run
        if other.pk not in seen:  # two runs indexed at once can each keep the pair
            seen.add(other.pk)
            runs.append(Match(m.similarity, m.shared, run=other))
    return runs[:limit] + references[:limit]

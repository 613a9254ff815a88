"""The leaderboard's rows for a split, ranked: one per experiment with graded runs in it, best any-medal % first.

`leaderboard` reads them from the stored aggregates (leaderboard.analysis.aggregates.reading) and
computes from the runs only the experiments where the viewer owns private runs; `leaderboard_from_runs`
computes every row from the runs, the reference the aggregates are tested against. The statistics of a
row (leaderboard.analysis.stats) know nothing of where their runs come from; this module joins the two.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Q

from leaderboard.analysis import stats
from leaderboard.analysis import versions as competition_versions
from leaderboard.analysis.aggregates import reading
from leaderboard.models import LeaderboardKind, Run, Split

# A reproduction is evidence about an entry, shown on the entry's page (leaderboard.trust.reproductions),
# not an entry of its own: it would be a second row of the same agent, model and owner.
ENTRIES = Q(experiment__reproduces__isnull=True)


def leaderboard(
    *,
    split_slug: str,
    user,
    filters: stats.LeaderboardFilters | None = None,
    pad: bool = False,
    ks: Sequence[int] = (1,),
    scope: tuple | None = None,
) -> tuple[Split, list[stats.ExperimentStats]]:
    """One row per experiment with runs in the split, best any-medal % first, from the stored
    aggregates (leaderboard.analysis.aggregates): a row per experiment and seed read, however many runs.
    `scope`: the viewer's (audience, own experiments) when the caller has read it already."""
    split, competition_ids = _split_competitions(split_slug)
    filters = filters or stats.LeaderboardFilters()
    audience, own = scope or reading.viewer_scope(user, verified_only=filters.verified_only)
    keyed = reading.stats_from_aggregates(
        split=split,
        competition_ids=competition_ids,
        audience=audience,
        experiments=stats.experiment_filter(filters) & ENTRIES,
        exclude=own,
        pad=pad,
        ks=ks,
    )
    if own:  # the viewer's private runs count for them alone: those experiments come from the runs
        runs = stats.filter_runs(Run.objects.visible_to(user).for_leaderboard().filter(ENTRIES), filters).filter(
            experiment_id__in=own
        )
        keyed += stats.stats_from_runs(runs, competition_ids, pad=pad, ks=ks)
    rows = [row for _, row in sorted(keyed, key=lambda pair: pair[0])]
    return split, stats.sort_rows(label_versions(rows, split), "-any_medal")


def leaderboard_from_runs(
    *,
    split_slug: str,
    user,
    filters: stats.LeaderboardFilters | None = None,
    pad: bool = False,
    ks: Sequence[int] = (1,),
) -> tuple[Split, list[stats.ExperimentStats]]:
    """The reference for `leaderboard`: the same rows computed from every visible graded run."""
    split, competition_ids = _split_competitions(split_slug)
    runs = stats.filter_runs(
        Run.objects.visible_to(user).for_leaderboard().filter(ENTRIES), filters or stats.LeaderboardFilters()
    )
    rows = [
        row for _, row in sorted(stats.stats_from_runs(runs, competition_ids, pad=pad, ks=ks), key=lambda pair: pair[0])
    ]
    return split, stats.sort_rows(label_versions(rows, split), "-any_medal")


def _split_competitions(split_slug: str) -> tuple[Split, set[int]]:
    split = stats.resolve_split(split_slug)
    found = split.competitions.values_list("id", "leaderboard_kind", "slug", "version")
    split.n_competitions = split.n_reference = 0
    split.slugs, split.current_versions = {}, {}
    for competition_id, kind, slug, version in found:
        split.n_competitions += 1
        split.n_reference += kind == LeaderboardKind.REFERENCE
        split.slugs[competition_id], split.current_versions[competition_id] = slug, version
    return split, set(split.slugs)


def label_versions(rows: list[stats.ExperimentStats], split: Split) -> list[stats.ExperimentStats]:
    """Each row says which versions of the split's competitions it used, where any changed."""
    for row in rows:
        row.versions_label = competition_versions.label(row.versions, split.slugs, split.current_versions)
    return rows

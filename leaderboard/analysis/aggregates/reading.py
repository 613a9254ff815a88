"""Leaderboard rows from the stored aggregates: one row read per experiment, split and seed.

Who sees what (docs/internals.md, "Leaderboard aggregates"): anonymous users and signed-in users
read the `public` rows, staff the `all` rows (each in its verified-only variant when that filter is
on). A signed-in user who owns private GRADED runs sees them too: the experiments holding such runs
are left out of the shared rows and computed from the runs they may see (stats.stats_from_runs), so
a private run never enters a row another viewer reads.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from django.db.models import Q

from leaderboard.analysis import stats
from leaderboard.analysis.aggregates.maintenance import mean_of_sums
from leaderboard.analysis.aggregates.models import Audience, SeedAggregate
from leaderboard.models import Experiment, Run, Split


class SeedRow(NamedTuple):
    experiment_id: int
    versions: str
    seed: int
    competitions: int
    gold_medal: int
    silver_medal: int
    bronze_medal: int
    above_median: int
    valid_submission: int
    any_medal: int
    cost_sum: str
    cost_known: int
    tokens_sum: str
    tokens_known: int
    usage_known: int
    usage_metered: int
    self_reported: int
    demo: int
    medal_competitions: str
    first_run_at_us: int
    first_run_id: int


def viewer_scope(user, *, verified_only: bool) -> tuple[Audience, set[int]]:
    """The shared rows this viewer reads, and the experiments to compute from their runs instead
    (those where the viewer owns a private graded run, which only they and staff may count)."""
    signed_in = user is not None and user.is_authenticated
    everyone = signed_in and user.is_staff
    own: set[int] = set()
    if signed_in and not everyone:
        own = set(Run.objects.filter(owner=user, is_private=True, status=Run.Status.GRADED)
                  .values_list("experiment_id", flat=True).distinct())
    return Audience.of(everyone=everyone, verified_only=verified_only), own


def stats_from_aggregates(
    *, split: Split, competition_ids: set[int], audience: Audience, experiments: Q, exclude: set[int],
    pad: bool, ks: Sequence[int],
) -> list[tuple[tuple, stats.ExperimentStats]]:
    """(the row's first run as (microseconds, id), its statistics) per experiment and version signature
    (leaderboard.analysis.versions: a row never mixes versions of a competition), in 2 queries."""
    rows = SeedAggregate.objects.filter(experiments, split=split, audience=audience).exclude(experiment_id__in=exclude)
    by_row: dict[tuple[int, str], dict[int, SeedRow]] = defaultdict(dict)
    for values in rows.values_list(*SeedRow._fields):
        row = SeedRow(*values)
        by_row[(row.experiment_id, row.versions)][row.seed] = row
    found = (Experiment.objects.select_related("agent", "model", "owner", "team")
             .in_bulk(list({e for e, _ in by_row})))
    medal_keys = [str(c) for c in competition_ids]  # in the set's order, as stats.medal_counts goes
    return [(min((r.first_run_at_us, r.first_run_id) for r in seeds.values()),
             experiment_stats(found[experiment_id], seeds, medal_keys, pad=pad, ks=ks, versions=versions))
            for (experiment_id, versions), seeds in by_row.items()]


def experiment_stats(
    experiment: Experiment, by_seed: dict[int, SeedRow], competition_keys: list[str], *, pad: bool,
    ks: Sequence[int], versions: str = "",
) -> stats.ExperimentStats:
    """stats.experiment_stats, from an experiment's seed rows instead of its runs (`competition_keys`:
    the split's competition ids as text, in the order pass@k sums over them)."""
    n = len(competition_keys)
    result = stats.ExperimentStats(experiment=experiment, n_competitions=n, versions=versions)
    result.seeds, result.incomplete_seeds = stats.split_seeds(
        {seed: row.competitions for seed, row in by_seed.items()}, n, pad=pad)
    counted = [by_seed[seed] for seed in result.seeds]
    for metric in stats.METRICS:
        result.per_seed[metric] = [100.0 * getattr(row, metric) / n for row in counted]
        result.metrics[metric] = stats.mean_sem(result.per_seed[metric])
    medals = Counter(",".join(row.medal_competitions for row in counted).split(","))
    counts = [medals[key] for key in competition_keys]
    result.pass_at = {k: stats.mean_pass_at_k(len(counted), counts, k) for k in ks}
    result.n_runs = sum(row.competitions for row in counted)
    result.n_runs_in_split = sum(row.competitions for row in by_seed.values())
    shown = counted if result.n_runs else list(by_seed.values())
    result.verified = bool(shown) and not any(row.self_reported for row in shown)
    result.demo = any(row.demo for row in shown)
    result.cost_usd = mean_of_sums([row.cost_sum for row in counted], sum(row.cost_known for row in counted))
    result.tokens = mean_of_sums([row.tokens_sum for row in counted], sum(row.tokens_known for row in counted))
    result.usage = stats.usage_word(sum(row.usage_known for row in counted), sum(row.usage_metered for row in counted))
    return result

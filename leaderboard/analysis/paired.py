"""Two experiments on the same competitions, compared pair by pair.

For every competition both experiments have graded runs on, each side gets its medal rate (the share
of its seeds with any medal) and the mean share of human teams its runs beat. The differences B - A
are paired by competition: their mean ± SEM, wins/ties/losses, a paired t-test and a Wilcoxon
signed-rank test (scipy). Competitions only one side attempted are listed, not compared.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from leaderboard.models import Run


@dataclass
class Side:
    medal_rate: float  # % of this experiment's seeds on the competition with any medal
    beats_humans: float | None  # mean % of human teams beaten, where known
    n_runs: int


@dataclass
class PairedTest:
    n: int
    mean_diff: float | None = None
    sem_diff: float | None = None
    wins: int = 0  # B better than A
    ties: int = 0
    losses: int = 0
    t_pvalue: float | None = None
    wilcoxon_pvalue: float | None = None


@dataclass
class Comparison:
    rows: list[tuple[int, Side, Side]] = field(default_factory=list)  # (competition id, A, B)
    only_a: list[int] = field(default_factory=list)
    only_b: list[int] = field(default_factory=list)
    medal: PairedTest = field(default_factory=lambda: PairedTest(0))
    beats_humans: PairedTest = field(default_factory=lambda: PairedTest(0))


def per_competition(runs: Iterable[Run]) -> dict[int, Side]:
    """Per competition: medal rate and mean share of human teams beaten over the latest run of each seed."""
    by_competition: dict[int, dict[int, Run]] = defaultdict(dict)
    for run in runs:  # oldest first: the latest run of a seed counts, as on the leaderboard
        by_competition[run.competition_id][run.seed] = run
    sides = {}
    for competition_id, by_seed in by_competition.items():
        latest = list(by_seed.values())
        beaten = [r.beats_human_pct for r in latest if r.beats_human_pct is not None]
        sides[competition_id] = Side(
            medal_rate=100.0 * sum(r.any_medal for r in latest) / len(latest),
            beats_humans=statistics.fmean(beaten) if beaten else None,
            n_runs=len(latest),
        )
    return sides


def paired_test(a: list[float], b: list[float]) -> PairedTest:
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    result = PairedTest(n=len(diffs))
    if not diffs:
        return result
    result.mean_diff = statistics.fmean(diffs)
    result.wins = sum(d > 0 for d in diffs)
    result.ties = sum(d == 0 for d in diffs)
    result.losses = sum(d < 0 for d in diffs)
    if len(diffs) >= 2:
        result.sem_diff = statistics.stdev(diffs) / math.sqrt(len(diffs))
        from scipy import stats as scipy_stats  # a second of import: only when a test is computed

        if result.sem_diff > 0:
            result.t_pvalue = float(scipy_stats.ttest_rel(b, a).pvalue)
        if any(diffs):
            result.wilcoxon_pvalue = float(scipy_stats.wilcoxon(b, a).pvalue)
    return result


def compare(runs_a: Iterable[Run], runs_b: Iterable[Run], competition_ids: set[int]) -> Comparison:
    """Graded runs of two experiments, restricted to the split's competitions."""
    a = {c: s for c, s in per_competition(r for r in runs_a if r.competition_id in competition_ids).items()}
    b = {c: s for c, s in per_competition(r for r in runs_b if r.competition_id in competition_ids).items()}
    both = sorted(set(a) & set(b))
    comparison = Comparison(rows=[(c, a[c], b[c]) for c in both],
                            only_a=sorted(set(a) - set(b)), only_b=sorted(set(b) - set(a)))
    comparison.medal = paired_test([a[c].medal_rate for c in both], [b[c].medal_rate for c in both])
    known = [c for c in both if a[c].beats_humans is not None and b[c].beats_humans is not None]
    comparison.beats_humans = paired_test([a[c].beats_humans for c in known], [b[c].beats_humans for c in known])
    return comparison

"""Kaggle medal rules exactly as MLE-bench computes them (mlebench/grade_helpers.py).

This module is the one place in the code base that turns a leaderboard into thresholds and a score
into medals. Everything else (grading reports, the API, the competition pages) calls it.

Rules (see ../shared/data/mle-bench/SOURCES.md):
- N is the number of teams; the leaderboard is read best first, so lower-is-better exactly when the
  first row's score is lower than the last row's.
- The threshold "at position p" is the score in row p (1-indexed), with p from the table below.
- The median threshold is the median of all leaderboard scores.
- A medal is earned when the score is at least as good as its threshold (ties win); above-median
  is strictly better than the median; medals are exclusive (gold beats silver beats bronze).
- The agent's score is rounded to 5 decimals before it is compared.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

SCORE_DECIMALS = 5


@dataclass(frozen=True)
class Thresholds:
    n_teams: int
    is_lower_better: bool
    gold: float
    silver: float
    bronze: float
    median: float


@dataclass(frozen=True)
class Medals:
    gold: bool = False
    silver: bool = False
    bronze: bool = False
    above_median: bool = False

    @property
    def any(self) -> bool:
        return self.gold or self.silver or self.bronze

    @property
    def label(self) -> str:
        for name in ("gold", "silver", "bronze"):
            if getattr(self, name):
                return name
        return "above median" if self.above_median else "none"


NO_MEDALS = Medals()


def medal_positions(n_teams: int) -> tuple[int, int, int]:
    """1-indexed leaderboard rows whose scores are the gold, silver and bronze thresholds."""
    if n_teams < 1:
        raise ValueError("a leaderboard needs at least one team")
    if n_teams < 100:
        return max(1, int(n_teams * 0.1)), max(1, int(n_teams * 0.2)), max(1, int(n_teams * 0.4))
    if n_teams < 250:
        return 10, max(1, int(n_teams * 0.2)), max(1, int(n_teams * 0.4))
    if n_teams < 1000:
        return 10 + int(n_teams * 0.002), 50, 100
    return 10 + int(n_teams * 0.002), max(1, int(n_teams * 0.05)), max(1, int(n_teams * 0.1))


def is_lower_better(scores: Sequence[float]) -> bool:
    """Direction as MLE-bench reads it from a best-first leaderboard."""
    return bool(scores[0] < scores[-1])


def compute_thresholds(scores: Sequence[float]) -> Thresholds:
    """Thresholds of a leaderboard given best first (the order Kaggle publishes it in)."""
    gold_at, silver_at, bronze_at = medal_positions(len(scores))
    return Thresholds(
        n_teams=len(scores),
        is_lower_better=is_lower_better(scores),
        gold=float(scores[gold_at - 1]),
        silver=float(scores[silver_at - 1]),
        bronze=float(scores[bronze_at - 1]),
        median=float(statistics.median(scores)),
    )


def round_score(score: float) -> float:
    return round(float(score), SCORE_DECIMALS)


def _at_least_as_good(score: float, threshold: float, lower_is_better: bool) -> bool:
    return score <= threshold if lower_is_better else score >= threshold


def award(score: float | None, thresholds: Thresholds | None) -> Medals:
    """Medals for a score; no score (invalid or missing submission) or no leaderboard earns none."""
    if score is None or thresholds is None or score != score:  # NaN never earns a medal
        return NO_MEDALS
    score = round_score(score)
    lower = thresholds.is_lower_better
    gold = _at_least_as_good(score, thresholds.gold, lower)
    silver = not gold and _at_least_as_good(score, thresholds.silver, lower)
    bronze = not gold and not silver and _at_least_as_good(score, thresholds.bronze, lower)
    above_median = score < thresholds.median if lower else score > thresholds.median
    return Medals(gold=gold, silver=silver, bronze=bronze, above_median=above_median)


@dataclass(frozen=True)
class Placing:
    rank: int  # the rank the score would take on the private leaderboard (ties share a rank)
    beats_pct: float  # % of human teams with a strictly worse score


def describe_placing(rank: int, beats_pct: float, n_teams: int) -> str:
    """A placing in words: "rank 3 of 24", "tied for rank 1 with 8 of 24 teams", or "below all 24 teams"
    (a rank past the last team is not a rank "of" them). The tied teams are those neither better
    (rank - 1 of them) nor beaten (beats_pct of them)."""
    if rank > n_teams:
        return f"below all {n_teams} teams"
    tied = n_teams - (rank - 1) - round(beats_pct * n_teams / 100)
    if tied > 0:
        return f"tied for rank {rank} with {tied} of {n_teams} teams"
    return f"rank {rank} of {n_teams}"


def place(score: float, scores: Sequence[float], lower_is_better: bool) -> Placing:
    """Where a score would land among the human teams (`scores` in any order)."""
    score = round_score(score)
    ordered = sorted(scores)
    below = bisect.bisect_left(ordered, score)  # teams with a strictly lower score
    above = len(ordered) - bisect.bisect_right(ordered, score)  # strictly higher
    better, worse = (below, above) if lower_is_better else (above, below)
    return Placing(rank=better + 1, beats_pct=100.0 * worse / len(ordered) if ordered else 0.0)

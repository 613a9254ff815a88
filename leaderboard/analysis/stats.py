"""MLE-bench's aggregation of runs into a headline figure, plus pass@k (MLAgentBench's research
tasks: leaderboard.analysis.research, whose names are also importable from here).

Per experiment and split (../shared/data/mle-bench/SOURCES.md): for each seed, the % of the split's
competitions where the run earned any medal (and gold, silver, bronze, above median, valid
submission); then the mean over seeds ± the standard error of the mean (ddof = 1).
By default only COMPLETE seeds count (a run for every competition of the split); with `pad=True`
every seed that has any run counts and a missing competition is a failure, the way MLE-bench pads
incomplete seeds. When one seed has several runs of a competition, the latest one counts.
Only GRADED runs count: a run this site could not grade (FAILED) says nothing about the agent, so it
leaves its seed incomplete rather than counting as a failure.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.db.models import Q

from leaderboard.analysis import versions as competition_versions
from leaderboard.analysis.aggregates.maintenance import microseconds, usage_counts
from leaderboard.models import Disclosure, Experiment, Run, Split

SPLIT_ALIASES = {"lite": "low", "all": "split75"}
METRICS = {
    "any_medal": "Any medal",
    "gold_medal": "Gold",
    "silver_medal": "Silver",
    "bronze_medal": "Bronze",
    "above_median": "Above median",
    "valid_submission": "Valid submission",
}


@dataclass(frozen=True)
class Estimate:
    mean: float | None
    sem: float | None
    n: int


def mean_sem(values: Sequence[float]) -> Estimate:
    """Mean and standard error of the mean (sample standard deviation, ddof = 1)."""
    n = len(values)
    if n == 0:
        return Estimate(None, None, 0)
    mean = statistics.fmean(values)
    sem = statistics.stdev(values) / math.sqrt(n) if n >= 2 else None
    return Estimate(mean, sem, n)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: 1 - C(n-c, k) / C(n, k) (n attempts, c successes)."""
    if k < 1 or n < k:
        raise ValueError(f"pass@{k} needs at least {k} attempts, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def split_choices() -> list[tuple[str, str]]:
    """(value, label) for the split selector: the headline aliases first, then every other split."""
    named = {"lite": "Lite (low)", "medium": "Medium", "high": "High", "all": "All 75"}
    hidden = set(SPLIT_ALIASES.values()) | set(named)
    others = Split.objects.filter(benchmark__slug="mle-bench").exclude(slug__in=hidden).values_list("slug", "name")
    return [*named.items(), *others]


def resolve_split(slug: str) -> Split:
    slug = SPLIT_ALIASES.get(slug, slug)
    return Split.objects.get(benchmark__slug="mle-bench", slug=slug)


@dataclass
class ExperimentStats:
    experiment: Experiment
    n_competitions: int
    seeds: list[int] = field(default_factory=list)  # the seeds counted
    incomplete_seeds: dict[int, int] = field(default_factory=dict)  # seed -> competitions with a run
    per_seed: dict[str, list[float]] = field(default_factory=dict)
    metrics: dict[str, Estimate] = field(default_factory=dict)
    pass_at: dict[int, float | None] = field(default_factory=dict)
    n_runs: int = 0  # runs in the counted seeds
    n_runs_in_split: int = 0  # all finished runs of the split, complete seeds or not
    cost_usd: float | None = None  # mean per counted run, where known
    tokens: float | None = None  # mean tokens in + out per counted run, where known
    usage: str = ""  # whose figures those are: USAGE_METERED, USAGE_REPORTED, USAGE_MIXED ("" none known)
    verified: bool = False  # every counted run (or, with none counted yet, every run) was graded here
    demo: bool = False  # some of those runs were scored against seed_demo's synthetic answers
    versions: str = ""  # the competition versions its runs were graded on (analysis.versions.signature)
    versions_label: str = ""  # the same in words, for the split ("spaceship-titanic v2"; "" all version 1)

    @property
    def n_seeds(self) -> int:
        return len(self.seeds)

    @property
    def most_in_a_seed(self) -> int:
        """How close the nearest incomplete seed is: its number of competitions with a run."""
        return max(self.incomplete_seeds.values(), default=0)

    def row(self) -> dict:
        """A flat dict for the JSON/CSV exports and the table."""
        e = self.experiment
        row = {
            "experiment_id": e.pk, "agent": str(e.agent), "model": e.model.name, "owner": e.owner_label,
            "hardware": e.hardware,
            "time_limit_hours": e.time_limit_hours, "n_seeds": self.n_seeds, "n_runs": self.n_runs,
            "n_runs_in_split": self.n_runs_in_split,
            "n_competitions": self.n_competitions,
            "verification": "verified" if self.verified else "self_reported", "demo": self.demo,
            "competition_versions": self.versions_label, **e.disclosures(),
        }
        for key, estimate in self.metrics.items():
            row[f"{key}_pct"], row[f"{key}_sem"] = _round(estimate.mean), _round(estimate.sem)
        for k, value in self.pass_at.items():
            row[f"pass_at_{k}_pct"] = _round(value)
        row["cost_usd"], row["tokens"], row["usage"] = _round(self.cost_usd), _round(self.tokens), self.usage
        return row


def _round(value: float | None) -> float | None:
    """The one rounding of a figure (2 decimals, as MLE-bench's README); pages show it as it is."""
    return None if value is None else round(value, 2)


def latest_per_seed(runs: Iterable[Run]) -> dict[int, dict[int, Run]]:
    """seed -> competition id -> the latest run (runs come oldest first)."""
    grid: dict[int, dict[int, Run]] = defaultdict(dict)
    for run in runs:
        grid[run.seed][run.competition_id] = run
    return grid


def counted_seeds(grid: dict[int, dict], n_competitions: int, *, pad: bool) -> tuple[list[int], dict[int, int]]:
    """The seeds that count (complete ones, or every seed with `pad`) and the incomplete ones left out
    (seed -> competitions with a run); `grid` is latest_per_seed's, restricted to the split."""
    return split_seeds({seed: len(by_competition) for seed, by_competition in grid.items()}, n_competitions,
                       pad=pad)


def split_seeds(sizes: dict[int, int], n_competitions: int, *, pad: bool) -> tuple[list[int], dict[int, int]]:
    """counted_seeds from each seed's number of competitions with a run."""
    seeds, incomplete = [], {}
    for seed in sorted(sizes):
        if pad or sizes[seed] == n_competitions:
            seeds.append(seed)
        else:
            incomplete[seed] = sizes[seed]
    return seeds, incomplete


def experiment_stats(
    experiment: Experiment, runs: Iterable[Run], competition_ids: set[int], *, pad: bool = False,
    ks: Sequence[int] = (1,),
) -> ExperimentStats:
    """The statistics of the experiment's runs on a split, the latest run of each competition and seed
    counting whatever its version (see experiment_stats_by_version for the leaderboard's rows)."""
    grid = latest_per_seed(r for r in runs if r.competition_id in competition_ids)
    return grid_stats(experiment, grid, competition_ids, pad=pad, ks=ks)


def experiment_stats_by_version(
    experiment: Experiment, runs: Iterable[Run], competition_ids: set[int], *, pad: bool = False,
    ks: Sequence[int] = (1,),
) -> list[ExperimentStats]:
    """One ExperimentStats per version signature of the runs (leaderboard.analysis.versions), each from
    its own seeds' runs only: results on different versions of a competition are never averaged."""
    return [row for _, row in _keyed_by_version(experiment, runs, competition_ids, pad=pad, ks=ks)]


def _keyed_by_version(
    experiment: Experiment, runs: Iterable[Run], competition_ids: set[int], *, pad: bool, ks: Sequence[int],
) -> list[tuple[tuple, ExperimentStats]]:
    """experiment_stats_by_version's rows, each with the (microseconds, id) of the run that first gave
    one of its seeds its signature (the leaderboard's order before sorting)."""
    states: dict[int, competition_versions.SeedStates] = defaultdict(competition_versions.SeedStates)
    for run in runs:
        if run.competition_id in competition_ids:
            states[run.seed].add(run)
    grids: dict[str, dict[int, dict[int, Run]]] = defaultdict(dict)
    firsts: dict[str, list[tuple]] = defaultdict(list)
    for seed, seed_states in states.items():
        for signature, by_competition in seed_states.states.items():
            grids[signature][seed] = by_competition
            first = seed_states.firsts[signature]
            firsts[signature].append((microseconds(first.created_at), first.pk))
    return [(min(firsts[signature]), grid_stats(experiment, grid, competition_ids, pad=pad, ks=ks, versions=signature))
            for signature, grid in grids.items()]


def grid_stats(
    experiment: Experiment, grid: dict[int, dict[int, Run]], competition_ids: set[int], *, pad: bool,
    ks: Sequence[int], versions: str = "",
) -> ExperimentStats:
    """The statistics of a seed -> competition -> run grid (latest_per_seed's, restricted to the split)."""
    n = len(competition_ids)
    stats = ExperimentStats(experiment=experiment, n_competitions=n, versions=versions)
    stats.seeds, stats.incomplete_seeds = counted_seeds(grid, n, pad=pad)
    counted = [run for seed in stats.seeds for run in grid[seed].values()]
    for metric in METRICS:
        values = seed_shares(grid, stats.seeds, n, metric)
        stats.per_seed[metric] = values
        stats.metrics[metric] = mean_sem(values)
    stats.pass_at = {k: _mean_pass_at_k(grid, stats.seeds, competition_ids, k) for k in ks}
    stats.n_runs = len(counted)
    stats.n_runs_in_split = sum(len(by_competition) for by_competition in grid.values())
    shown = counted or [run for by_competition in grid.values() for run in by_competition.values()]
    stats.verified = bool(shown) and all(r.verification == Run.Verification.VERIFIED for r in shown)
    stats.demo = any(r.is_demo for r in shown)
    stats.cost_usd = _mean_known(r.cost_usd for r in counted)
    stats.tokens = _mean_known(
        (r.tokens_in or 0) + (r.tokens_out or 0) if r.tokens_in is not None or r.tokens_out is not None else None
        for r in counted
    )
    stats.usage = usage_basis(counted)
    return stats


def seed_shares(grid, seeds: list[int], n_competitions: int, metric: str = "any_medal") -> list[float]:
    """Per counted seed, the % of the split's competitions whose run has `metric` (a missing run: no)."""
    return [100.0 * sum(getattr(r, metric) for r in grid[seed].values()) / n_competitions for seed in seeds]


USAGE_METERED, USAGE_REPORTED, USAGE_MIXED = "metered", "self_reported", "mixed"


def usage_basis(runs) -> str:
    """Whose cost and token figures these runs' are (usage_word)."""
    counts = usage_counts(runs)
    return usage_word(counts["usage_known"], counts["usage_metered"])


def usage_word(known: int, metered: int) -> str:
    """Of `known` runs with a cost or token figure, `metered` counted by the site's LLM gateway: every
    one (metered), none (self_reported: as the agent or its log reports it), some (mixed); "" for none known."""
    if not known:
        return ""
    return USAGE_METERED if metered == known else USAGE_REPORTED if not metered else USAGE_MIXED


def _mean_known(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def _mean_pass_at_k(grid, seeds: list[int], competition_ids: set[int], k: int) -> float | None:
    """pass@k averaged over the split's competitions; each counted seed is one attempt."""
    if len(seeds) < k or not competition_ids:
        return None
    return mean_pass_at_k(len(seeds), medal_counts(grid, seeds, competition_ids), k)


def mean_pass_at_k(n_seeds: int, counts: list[int], k: int) -> float | None:
    """pass@k over n_seeds attempts averaged over competitions (`counts`: each one's seeds with a medal)."""
    if n_seeds < k or not counts:
        return None
    return 100.0 * sum(pass_at_k(n_seeds, c, k) for c in counts) / len(counts)


def medal_counts(grid, seeds: list[int], competition_ids) -> list[int]:
    """Per competition (in the given order), how many of the counted seeds earned any medal."""
    return [sum(1 for seed in seeds if getattr(grid[seed].get(competition_id), "any_medal", False))
            for competition_id in competition_ids]


@dataclass
class LeaderboardFilters:
    agent: str = ""
    model: str = ""
    hardware: str = ""
    verified_only: bool = False
    # Disclosures: "yes", "no" or "unknown" (not disclosed) for internet and test-set signal; "yes" or
    # "no" for known leakage; "" for any.
    internet: str = ""
    test_signal: str = ""
    leakage: str = ""


def stats_from_runs(
    runs, competition_ids: set[int], *, pad: bool, ks: Sequence[int],
) -> list[tuple[tuple, ExperimentStats]]:
    """(the row's first run as (microseconds, id), its statistics) per experiment of `runs`
    (for_leaderboard's, oldest first) and version signature, in the order of their first run."""
    by_experiment: dict[int, list[Run]] = defaultdict(list)
    for run in runs.filter(competition_id__in=competition_ids):
        by_experiment[run.experiment_id].append(run)
    return [keyed for group in by_experiment.values()
            for keyed in _keyed_by_version(group[-1].experiment, group, competition_ids, pad=pad, ks=ks)]


def experiment_filter(filters: LeaderboardFilters) -> Q:
    """The agent, model and hardware filters on a model with an `experiment` relation (runs, aggregates)."""
    q = Q()
    if filters.agent:
        q &= Q(experiment__agent__name__icontains=filters.agent)
    if filters.model:
        q &= Q(experiment__model__name__icontains=filters.model)
    if filters.hardware:
        q &= Q(experiment__hardware__icontains=filters.hardware)
    for name in ("internet", "test_signal"):
        if value := getattr(filters, name):
            q &= Q(**{f"experiment__{name}": DISCLOSURE_VALUES[value]})
    if filters.leakage:
        q &= Q(experiment__known_leakage=filters.leakage == "yes")
    return q


# A disclosure filter's values, as the query string says them, and what the experiment stores.
DISCLOSURE_VALUES = {"yes": Disclosure.YES, "no": Disclosure.NO, "unknown": Disclosure.UNKNOWN}


def filter_runs(runs, filters: LeaderboardFilters):
    runs = runs.filter(experiment_filter(filters))
    if filters.verified_only:
        runs = runs.filter(verification=Run.Verification.VERIFIED, is_demo=False)  # synthetic answers verify nothing
    return runs


SORT_KEYS = {
    **{metric: (lambda m: lambda s: s.metrics[m].mean)(metric) for metric in METRICS},
    "agent": lambda s: str(s.experiment.agent).lower(),
    "model": lambda s: s.experiment.model.name.lower(),
    "seeds": lambda s: s.n_seeds,
    "cost": lambda s: s.cost_usd,
    "tokens": lambda s: s.tokens,
}


def sort_rows(rows: list[ExperimentStats], sort: str) -> list[ExperimentStats]:
    """Verified rows first, then self-reported ones (a claim never outranks a result graded here);
    each part sorted by a SORT_KEYS name ('-' prefix: descending), rows without a value last."""
    descending, name = sort.startswith("-"), sort.lstrip("-")
    key = SORT_KEYS.get(name, SORT_KEYS["any_medal"])
    ordered = []
    for part in ([r for r in rows if r.verified], [r for r in rows if not r.verified]):
        known = sorted((r for r in part if key(r) is not None), key=key, reverse=descending)
        ordered += known + [r for r in part if key(r) is None]
    return ordered


def pareto_front(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The (cost, score) points no other point beats on both: cheaper-or-equal and better-or-equal.

    Sorted by cost; lower cost and higher score are better."""
    front: list[tuple[float, float]] = []
    for cost, score in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or score > front[-1][1]:
            front.append((cost, score))
    return front

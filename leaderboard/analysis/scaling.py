"""Scaling curves across experiments: medals against time budget, pass@k against k, and hardware.

The one place for these rules (the pages, the JSON/CSV endpoints and the static exports call it):
- The score of a run at a time budget T (`run_timeline`, `medal_at`): the grade of its latest graded
  snapshot at or before T, i.e. what it would have submitted had it been stopped at T; before its
  first snapshot it has submitted nothing (no medal); an invalid snapshot earns no medal, and so, for
  now, does one not graded yet or whose grading failed: each point counts the runs that still have such
  snapshots (`incompleteness`), and the page marks the point incomplete. A run
  without snapshots has its final grade from its recorded duration on, or, when that is unknown,
  from its experiment's time limit; with neither known, its final grade counts at every budget.
- Seeds and padding are the leaderboard's (leaderboard.analysis.stats): the latest run per seed and
  competition; complete seeds only, or with `pad` every seed, a missing competition being no medal.
- pass@k: the unbiased estimator 1 - C(n-c, k)/C(n, k) per competition (n counted seeds, c of them
  with a medal), averaged over the split; its 95% interval is a percentile bootstrap over
  competitions (`bootstrap_interval`) with a fixed seed, so the same data always give the same band.
- Hardware groups: experiments equal in agent, model, time limit, settings and owner, i.e. differing
  only in hardware; derived from the experiment fields, never typed by hand. Two owners' results are
  never one group (leaderboard.runs.ownership).

Runs are read as plain tuples (`RunPoint`), a few queries per curve whatever the number of runs.
"""

from __future__ import annotations

import functools
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import orjson
from django.db import connection

from leaderboard.analysis import stats
from leaderboard.lib import durations
from leaderboard.models import Experiment, Run, Snapshot, Split

BOOTSTRAP_SEED = 20240501
BOOTSTRAP_SAMPLES = 1000
INTERVAL_PERCENTILES = (2.5, 97.5)
DEFAULT_HOURS = (1.0, 2.0, 4.0, 8.0, 24.0)
MAX_BUDGETS = 48


class RunPoint(NamedTuple):
    id: int
    experiment_id: int
    competition_id: int
    seed: int
    any_medal: bool
    duration_s: float | None
    snapshot_timeline: str  # Run.snapshot_timeline: its graded snapshots, kept by leaderboard.runs.snapshots


@dataclass
class Selection:
    """The runs one curve reads: a split's competitions and the picked experiments' visible graded runs."""

    split: Split
    competition_ids: list[int]
    experiments: dict[int, Experiment]
    runs: dict[int, list[RunPoint]] = field(default_factory=dict)  # experiment id -> runs, oldest first

    def grid(self, experiment_id: int, pad: bool) -> tuple[dict[int, dict[int, RunPoint]], list[int]]:
        grid = stats.latest_per_seed(self.runs[experiment_id])
        seeds, _ = stats.counted_seeds(grid, len(self.competition_ids), pad=pad)
        return grid, seeds


def select(*, split_slug: str, user, filters: stats.LeaderboardFilters | None = None,
           experiment_ids: Sequence[int] = ()) -> Selection:
    """Raises Split.DoesNotExist for an unknown split."""
    split = stats.resolve_split(split_slug)
    competition_ids = sorted(split.competitions.values_list("id", flat=True))
    runs = _runs(user, filters, experiment_ids).filter(competition_id__in=competition_ids)
    by_experiment: dict[int, list[RunPoint]] = defaultdict(list)
    for row in rows_of(runs.order_by("created_at", "id").values_list(*RunPoint._fields)):
        by_experiment[row[1]].append(RunPoint._make(row))
    experiments = Experiment.objects.select_related("agent", "model").in_bulk(list(by_experiment))
    ordered = dict(sorted(experiments.items(), key=lambda item: (str(item[1].agent).lower(),
                                                                  item[1].model.name.lower(), item[0])))
    return Selection(split=split, competition_ids=competition_ids, experiments=ordered, runs=dict(by_experiment))


def rows_of(queryset) -> list[tuple]:
    """A values_list query's rows straight from the database cursor: the same SQL, without Django's
    per-value conversion, which was most of the time spent on 240,000 snapshot rows. Booleans may come
    back as 0/1 (SQLite); every use here only counts or tests them."""
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _runs(user, filters: stats.LeaderboardFilters | None, experiment_ids: Sequence[int]):
    runs = stats.filter_runs(Run.objects.visible_to(user).filter(status=Run.Status.GRADED),
                             filters or stats.LeaderboardFilters())
    return runs.filter(experiment_id__in=experiment_ids) if experiment_ids else runs


def experiment_header(experiment: Experiment, n_seeds: int) -> dict:
    return {"experiment_id": experiment.pk, "agent": str(experiment.agent), "model": experiment.model.name,
            "hardware": experiment.hardware, "time_limit_hours": experiment.time_limit_hours, "n_seeds": n_seeds}


# --- the score of a run at a time budget -----------------------------------------------------------


def run_timeline(run: RunPoint, snapshots: Sequence[tuple[float, bool]],
                 time_limit_hours: float | None) -> list[tuple[float, bool]]:
    """(seconds, any medal) from which each grade holds, in time order: the graded snapshots, or for a
    run without any, its final grade from its duration, else from its time limit, else from 0."""
    if snapshots:
        return list(snapshots)
    if run.duration_s is not None:
        return [(run.duration_s, run.any_medal)]
    if time_limit_hours is not None:
        return [(time_limit_hours * 3600.0, run.any_medal)]
    return [(0.0, run.any_medal)]


# A snapshot at a budget counts at that budget, even where hours -> seconds rounds it a hair past it.
SAME_MOMENT_S = 1e-6


def medal_at(timeline: Sequence[tuple[float, bool]], budget_s: float) -> bool:
    """The grade of the latest timeline entry at or before the budget; nothing submitted yet: no medal."""
    medal = False
    for seconds, awarded in timeline:
        if seconds > budget_s + SAME_MOMENT_S:
            break
        medal = awarded
    return medal


def medals_at(timeline: Sequence[tuple[float, bool]], budgets_s: Sequence[float]) -> list[bool]:
    """medal_at for ascending budgets in one pass over the timeline."""
    out, medal, i = [], False, 0
    for budget in budgets_s:
        while i < len(timeline) and timeline[i][0] <= budget + SAME_MOMENT_S:
            medal = timeline[i][1]
            i += 1
        out.append(medal)
    return out


def graded_snapshots(selection: Selection) -> dict[int, list[tuple[float, bool]]]:
    """run id -> its graded snapshots' (seconds, any medal), in time order (read from the runs' rows)."""
    return {run.id: [(t, bool(m)) for t, m in orjson.loads(run.snapshot_timeline)]
            for runs in selection.runs.values() for run in runs if run.snapshot_timeline not in ("", "[]")}


def ungraded_snapshots(selection: Selection) -> dict[int, list[tuple[float, str]]]:
    """run id -> (seconds, "pending" | "failed") of its snapshots without a grade: the curve counts them
    as no medal, so each point says how many of its runs still have some (`incompleteness`)."""
    ids = {run.id for runs in selection.runs.values() for run in runs}
    if not ids:
        return {}  # and no query: an empty IN () has no SQL
    rows = Snapshot.objects.filter(run__experiment_id__in=list(selection.experiments),
                                   run__competition_id__in=selection.competition_ids,
                                   run__status=Run.Status.GRADED).exclude(status=Snapshot.Status.GRADED)
    out: dict[int, list[tuple[float, str]]] = defaultdict(list)
    for run_id, seconds, status in rows_of(rows.values_list("run_id", "elapsed_seconds", "status")):
        if run_id in ids:
            out[run_id].append((seconds, "failed" if status == Snapshot.Status.FAILED else "pending"))
    return dict(out)


def incompleteness(runs: Iterable[RunPoint], ungraded: dict[int, list[tuple[float, str]]],
                   budget_s: float) -> dict[str, int]:
    """How many of these runs have a snapshot at or before the budget still pending (or grading), and
    how many one whose grading failed."""
    counts = {"pending": 0, "failed": 0}
    for run in runs:
        states = {state for seconds, state in ungraded.get(run.id, ()) if seconds <= budget_s + SAME_MOMENT_S}
        for state in states:
            counts[state] += 1
    return {"runs_with_pending_snapshots": counts["pending"], "runs_with_failed_snapshots": counts["failed"]}


def default_budgets(selection: Selection, snapshots: dict[int, list[tuple[float, bool]]]) -> list[float]:
    """Budgets in hours: the moments a counted grade can change, up to the longest time limit: snapshot
    times, the durations of runs without snapshots, and the time limits themselves; else DEFAULT_HOURS.
    At most MAX_BUDGETS, picked evenly from the sorted times, the longest kept."""
    limits = [e.time_limit_hours * 3600.0 for e in selection.experiments.values() if e.time_limit_hours is not None]
    cap = max(limits) if limits else math.inf
    times = {t for timeline in snapshots.values() for t, _ in timeline}
    times |= {r.duration_s for runs in selection.runs.values() for r in runs
              if r.duration_s is not None and r.id not in snapshots}
    ordered = sorted({t for t in times if t <= cap} | set(limits))
    if len(ordered) > MAX_BUDGETS:
        step = (len(ordered) - 1) / (MAX_BUDGETS - 1)
        ordered = [ordered[round(i * step)] for i in range(MAX_BUDGETS)]
    return [t / 3600.0 for t in ordered] or list(DEFAULT_HOURS)


def time_curve(selection: Selection, hours: Sequence[float] | None = None, *, pad: bool = False) -> dict:
    """GET /api/scaling/time/: per experiment, any-medal % (mean ± SEM over seeds) at each budget, with
    how many counted runs still have ungraded snapshots there; `time_unit` is the axis unit for people."""
    snapshots, ungraded = graded_snapshots(selection), ungraded_snapshots(selection)
    budgets = sorted(set(hours)) if hours else default_budgets(selection, snapshots)
    experiments = [_time_points(selection, experiment, budgets, snapshots, ungraded, pad)
                   for experiment in selection.experiments.values()]
    return {"split": selection.split.slug, "hours": budgets,
            "time_unit": durations.axis_unit([h * 3600.0 for h in budgets]), "experiments": experiments}


def _time_points(selection: Selection, experiment: Experiment, budgets: list[float],
                 snapshots: dict, ungraded: dict, pad: bool) -> dict:
    budgets_s = [h * 3600.0 for h in budgets]
    grid, seeds = selection.grid(experiment.pk, pad)
    n = len(selection.competition_ids)
    per_seed = [[0] * len(budgets_s) for _ in seeds]
    for row, seed in zip(per_seed, seeds, strict=True):
        for run in grid[seed].values():
            timeline = run_timeline(run, snapshots.get(run.id, ()), experiment.time_limit_hours)
            for b, medal in enumerate(medals_at(timeline, budgets_s)):
                row[b] += medal
    counted = [run for seed in seeds for run in grid[seed].values()]
    points = []
    for b, budget_s in enumerate(budgets_s):
        estimate = stats.mean_sem([100.0 * row[b] / n for row in per_seed])
        points.append({"hours": budgets[b], "budget": durations.format_seconds(budget_s),
                       "any_medal_pct": stats._round(estimate.mean), "any_medal_sem": stats._round(estimate.sem),
                       "n_seeds": len(seeds), **incompleteness(counted, ungraded, budget_s)})
    return {**experiment_header(experiment, len(seeds)), "points": points}


# --- pass@k ----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _pass_at_k(n: int, c: int, k: int) -> float:
    return stats.pass_at_k(n, c, k)


@functools.lru_cache(maxsize=32)
def _resample_counts(n_items: int) -> np.ndarray:
    """How often each item is drawn in each bootstrap sample: rows of rng.integers(0, n, (B, n))."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    draws = rng.integers(0, n_items, size=(BOOTSTRAP_SAMPLES, n_items))
    counts = np.zeros((BOOTSTRAP_SAMPLES, n_items))
    np.add.at(counts, (np.arange(BOOTSTRAP_SAMPLES)[:, None], draws), 1.0)
    counts.setflags(write=False)
    return counts


def bootstrap_interval(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap of the mean over rows (items x columns): BOOTSTRAP_SAMPLES resamples of the
    rows drawn by np.random.default_rng(BOOTSTRAP_SEED).integers(0, n, (B, n)), 2.5th and 97.5th
    percentiles (NumPy's default linear interpolation) of the resampled means, per column."""
    means = _resample_counts(values.shape[0]) @ values / values.shape[0]
    low, high = np.percentile(means, INTERVAL_PERCENTILES, axis=0)
    return low, high


def pass_at_k_points(counts: Sequence[int], n: int) -> list[dict]:
    """pass@k for k = 1..n from per-competition medal counts, with its bootstrap interval (in %)."""
    if n == 0 or not counts:
        return []
    values = np.array([[_pass_at_k(n, c, k) for k in range(1, n + 1)] for c in counts])
    low, high = bootstrap_interval(values)
    mean = values.mean(axis=0)
    return [{"k": k, "pass_at_k_pct": stats._round(100.0 * mean[k - 1]),
             "ci_low_pct": stats._round(100.0 * low[k - 1]), "ci_high_pct": stats._round(100.0 * high[k - 1])}
            for k in range(1, n + 1)]


def pass_at_k_curve(selection: Selection, *, pad: bool = False) -> dict:
    """GET /api/scaling/pass-at-k/: per experiment, pass@k against k over its counted seeds."""
    experiments = []
    for experiment_id, experiment in selection.experiments.items():
        grid, seeds = selection.grid(experiment_id, pad)
        counts = stats.medal_counts(grid, seeds, selection.competition_ids)
        experiments.append({**experiment_header(experiment, len(seeds)),
                            "points": pass_at_k_points(counts, len(seeds))})
    return {"split": selection.split.slug, "experiments": experiments}


# --- hardware --------------------------------------------------------------------------------------


def hardware_key(experiment: Experiment) -> tuple:
    """Experiments with the same key differ only in hardware."""
    return (experiment.agent_id, experiment.model_id, experiment.time_limit_hours, experiment.settings_hash,
            experiment.internet, experiment.test_signal, experiment.owner_key)


def hardware_order(experiment: Experiment) -> tuple:
    return (experiment.gpu_count or 0, experiment.gpu_type.lower(), experiment.cpu_count or 0,
            experiment.memory_gb or 0.0, experiment.pk)


def hardware_groups(experiments: Iterable[Experiment]) -> list[list[Experiment]]:
    """Experiments grouped by hardware_key, each group ordered by GPU count, then type."""
    groups: dict[tuple, list[Experiment]] = defaultdict(list)
    for experiment in experiments:
        groups[hardware_key(experiment)].append(experiment)
    return [sorted(group, key=hardware_order) for group in groups.values()]


def hardware_curve(selection: Selection, *, pad: bool = False) -> dict:
    """GET /api/scaling/hardware/: any-medal % (mean ± SEM) per experiment, grouped by hardware_key."""
    n = len(selection.competition_ids)
    groups = []
    grouped = hardware_groups(selection.experiments.values())
    used = gpus_used([experiment.pk for group in grouped for experiment in group])
    for group in grouped:
        first = group[0]
        rows = []
        for experiment in group:
            grid, seeds = selection.grid(experiment.pk, pad)
            estimate = stats.mean_sem(stats.seed_shares(grid, seeds, n))
            rows.append({"experiment_id": experiment.pk, "hardware": experiment.hardware,
                         "gpu_type": experiment.gpu_type, "gpu_count": experiment.gpu_count,
                         "gpus_used": "; ".join(used.get(experiment.pk, [])),
                         "cpu_count": experiment.cpu_count, "memory_gb": experiment.memory_gb,
                         "n_seeds": len(seeds), "any_medal_pct": stats._round(estimate.mean),
                         "any_medal_sem": stats._round(estimate.sem)})
        groups.append({"agent": str(first.agent), "model": first.model.name,
                       "time_limit_hours": first.time_limit_hours, "experiments": rows})
    return {"split": selection.split.slug, "groups": groups}


def gpus_used(experiment_ids: list[int]) -> dict[int, list[str]]:
    """Per experiment, the GPUs its runs' sandboxes were given as their runners recorded them (model
    and driver; Run.gpus_used), each once: a job that asked for "1x GPU" says here which GPU it got."""
    found: dict[int, list[str]] = defaultdict(list)
    rows = Run.objects.filter(experiment_id__in=experiment_ids).exclude(recipe={})
    for experiment_id, hardware in rows.order_by().values_list("experiment_id", "recipe__hardware").distinct():
        described = Run.describe_gpus(hardware)
        if described and described not in found[experiment_id]:
            found[experiment_id].append(described)
    return {key: sorted(value) for key, value in found.items()}


# --- flat rows for the CSV downloads (exactly the numbers drawn) ------------------------------------


def csv_rows(payload: dict) -> list[dict]:
    """One row per point drawn: the experiment's (or group's) fields repeated on each."""
    rows = []
    for experiment in payload.get("experiments", []):
        header = {k: v for k, v in experiment.items() if k != "points"}
        rows += [{**header, **point} for point in experiment["points"]]
    for group in payload.get("groups", []):
        header = {k: v for k, v in group.items() if k != "experiments"}
        rows += [{**header, **row} for row in group["experiments"]]
    return rows


def timeline_text(rows: Iterable[tuple[float, bool]]) -> str:
    """Run.snapshot_timeline: the graded snapshots as compact JSON [[seconds, 0/1 any medal], ...]."""
    return json.dumps([[float(t), int(bool(m))] for t, m in rows], separators=(",", ":"))

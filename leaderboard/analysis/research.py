"""MLAgentBench's statistics of research tasks: improvement over the starter's baseline, success
(at least 10% better: `research_success`, the one place for the rule), and per experiment the success
rate and mean improvement as mean ± SEM over seeds, per task and overall, with time and tokens per run.

Per experiment and seed, the latest run of each task counts (as MLE-bench counts a seed's runs);
then, per seed, the share of its tasks that succeeded and the mean improvement of its tasks with a
score; the mean ± SEM (ddof = 1) over seeds is the headline. Per task, the same over that task's
seeds. A run without a score is a failure and enters no mean improvement.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from leaderboard.analysis.stats import mean_sem, usage_basis
from leaderboard.lib.research_failures import excluded
from leaderboard.models import Competition, Experiment, Run, Snapshot

RESEARCH_SUCCESS_IMPROVEMENT = 0.10  # MLAgentBench: more than 10% better than the baseline
THRESHOLDS = (0.05, 0.10, 0.15, 0.20, 0.30)  # plot.py's improve_5 ... improve_30


def improvement(score: float | None, baseline: float, lower_is_better: bool) -> float | None:
    """Relative improvement over the baseline in the metric's direction (0.1 = 10% better). A score
    <= 0 is missing, as MLAgentBench's plot.py counts it (its eval's failure placeholders)."""
    if score is None or score != score or score <= 0 or baseline == 0:
        return None
    gain = (baseline - score) if lower_is_better else (score - baseline)
    return gain / abs(baseline)


def research_success(gain: float | None, threshold: float = RESEARCH_SUCCESS_IMPROVEMENT) -> bool:
    """MLAgentBench's success: strictly more than 10% (or `threshold`) better than the baseline (its `>`;
    1e-9 absorbs the float error of a gain of exactly 10%). The one place for the rule."""
    return gain is not None and gain > threshold + 1e-9


def research_outcome(run: Run) -> tuple[float | None, bool | None]:
    """(improvement over its task's baseline, success) of a run on a research task with a baseline;
    (None, None) for any other run. The run's competition must be loaded."""
    competition = run.competition
    if competition is None or competition.kind != Competition.Kind.RESEARCH or competition.baseline_score is None:
        return None, None
    if excluded(run.failure_classes):
        return None, None  # left out of the statistics, as MLAgentBench's plot.py leaves it
    gain = improvement(run.score, competition.baseline_score, bool(competition.is_lower_better))
    return gain, research_success(gain)


@dataclass
class TaskStats:
    competition: Competition
    n_seeds: int
    success: object  # stats.Estimate of the % of seeds that succeeded
    improvement: object  # stats.Estimate of the improvement (%) over the seeds with a score


@dataclass
class ResearchStats:
    experiment: Experiment
    n_runs: int
    n_success: int
    success_rate: float  # % of the runs counted at least 10% better than the baseline
    mean_improvement_pct: float | None  # over the counted runs with a score
    success: object = None  # stats.Estimate over seeds: each seed's % of tasks that succeeded
    improvement: object = None  # stats.Estimate over seeds: each seed's mean improvement (%)
    n_seeds: int = 0
    mean_duration_s: float | None = None
    mean_tokens: float | None = None
    usage: str = ""  # stats.usage_basis of the runs: metered by the gateway, self-reported, mixed
    verified: bool = False  # every counted run was scored here (a job's eval.py), none taken as reported
    n_excluded: int = 0  # runs left out as plot.py leaves them (error, connection, oom, mkl)
    mean_agent_steps: float | None = None  # MLAgentBench's steps (trace.json's), where known
    success_at: dict = field(default_factory=dict)  # threshold % -> % of counted runs above it, final score
    best_success_at: dict = field(default_factory=dict)  # the same with each run's best step's score
    tasks: list[TaskStats] = field(default_factory=list)


def research_results(runs: Iterable[Run]) -> list[ResearchStats]:
    """Per experiment, verified ones first (as on the board), then best success rate first. `runs`
    (oldest first) must have their competition loaded (kind research, baseline_score set)."""
    latest: dict[int, dict[tuple[int, int], Run]] = defaultdict(dict)
    experiments: dict[int, Experiment] = {}
    left_out: dict[int, int] = defaultdict(int)
    for run in runs:
        experiments[run.experiment_id] = run.experiment
        if excluded(run.failure_classes):
            left_out[run.experiment_id] += 1
            continue
        latest[run.experiment_id][(run.competition_id, run.seed)] = run
    best = _best_scores([run for counted in latest.values() for run in counted.values()])
    results = []
    for pk, experiment in experiments.items():
        counted = list(latest[pk].values())
        result = _experiment_stats(experiment, counted, best) if counted else ResearchStats(experiment, 0, 0, 0.0, None)
        result.n_excluded = left_out[pk]
        results.append(result)
    return sorted(results, key=lambda r: (not r.verified, -r.success_rate))


def best_gain(run: Run, best_score: float | None) -> float | None:
    """plot.py's best-step improvement: the best score over the run's steps (its snapshots) and its final
    score, scores <= 0 left out: the highest where higher is better, the lowest where lower is."""
    competition = run.competition
    if excluded(run.failure_classes) or competition is None or competition.baseline_score is None:
        return None
    return improvement(best_score, competition.baseline_score, bool(competition.is_lower_better))


def _best_scores(runs: list[Run]) -> dict[int, float | None]:
    from django.db.models import Max, Min

    scores = {run.pk: [run.score] if run.score is not None and run.score > 0 else [] for run in runs}
    rows = (Snapshot.objects.filter(run_id__in=list(scores), score__gt=0).values("run_id")
            .annotate(high=Max("score"), low=Min("score")))
    by_run = {row["run_id"]: row for row in rows}
    best = {}
    for run in runs:
        row, values = by_run.get(run.pk), list(scores[run.pk])
        lower = bool(run.competition.is_lower_better)
        if row is not None:
            values.append(row["low"] if lower else row["high"])
        best[run.pk] = (min(values) if lower else max(values)) if values else None
    return best


def _experiment_stats(experiment: Experiment, runs: list[Run], best: dict[int, float | None]) -> ResearchStats:
    gains = {run.pk: research_outcome(run)[0] for run in runs}
    best_gains = [best_gain(run, best.get(run.pk)) for run in runs]
    known = [g for g in gains.values() if g is not None]
    successes = sum(1 for g in known if research_success(g))
    by_seed: dict[int, list[Run]] = defaultdict(list)
    for run in runs:
        by_seed[run.seed].append(run)
    per_seed = [_summary([gains[r.pk] for r in group]) for _, group in sorted(by_seed.items())]
    return ResearchStats(
        experiment=experiment, n_runs=len(runs), n_success=successes, success_rate=100.0 * successes / len(runs),
        mean_improvement_pct=100.0 * statistics.fmean(known) if known else None,
        success=mean_sem([s for s, _ in per_seed]), improvement=mean_sem([i for _, i in per_seed if i is not None]),
        n_seeds=len(by_seed), mean_duration_s=_mean(r.duration_s for r in runs),
        mean_tokens=_mean(_tokens(r) for r in runs), usage=usage_basis(runs), tasks=_task_stats(runs, gains),
        verified=all(r.verification == Run.Verification.VERIFIED for r in runs),
        mean_agent_steps=_mean(r.agent_steps for r in runs),
        success_at={round(100 * t): 100.0 * sum(research_success(g, t) for g in gains.values()) / len(runs)
                    for t in THRESHOLDS},
        best_success_at={round(100 * t): 100.0 * sum(research_success(g, t) for g in best_gains) / len(runs)
                         for t in THRESHOLDS},
    )


def _task_stats(runs: list[Run], gains: dict[int, float | None]) -> list[TaskStats]:
    by_task: dict[int, list[Run]] = defaultdict(list)
    for run in runs:
        by_task[run.competition_id].append(run)
    rows = []
    for group in by_task.values():
        summaries = [_summary([gains[r.pk]]) for r in group]
        rows.append(TaskStats(group[0].competition, len(group), mean_sem([s for s, _ in summaries]),
                              mean_sem([i for _, i in summaries if i is not None])))
    return sorted(rows, key=lambda t: t.competition.slug)


def _summary(gains: list[float | None]) -> tuple[float, float | None]:
    """(% of the runs that succeeded, their mean improvement in % over those with a score)."""
    known = [g for g in gains if g is not None]
    success = 100.0 * sum(1 for g in known if research_success(g)) / len(gains)
    return success, 100.0 * statistics.fmean(known) if known else None


def _tokens(run: Run) -> int | None:
    parts = [n for n in (run.tokens_in, run.tokens_out) if n is not None]
    return sum(parts) if parts else None


def _mean(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def research_runs(user, verified_only: bool = False):
    """The runs the research statistics count for `user`; with verified_only, only those scored here."""
    # The tasks' ids first: joined in the query, SQLite scans every run (25 ms at 100,000 runs, 1 ms so).
    tasks = list(Competition.objects.filter(kind=Competition.Kind.RESEARCH, baseline_score__isnull=False)
                 .values_list("pk", flat=True))
    if not tasks:  # no query to build either (a third of a cached leaderboard page's time)
        return Run.objects.none()
    runs = (Run.objects.visible_to(user).for_leaderboard()
            .filter(competition_id__in=tasks, experiment__reproduces__isnull=True)  # not reproductions
            .defer(None).select_related("competition", "experiment__agent", "experiment__model"))
    return runs.filter(verification=Run.Verification.VERIFIED) if verified_only else runs

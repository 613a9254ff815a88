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

from leaderboard.models import Competition, Experiment, Run

RESEARCH_SUCCESS_IMPROVEMENT = 0.10  # MLAgentBench: more than 10% better than the baseline
ERROR_CLASS = "error"  # leaderboard.lib.research_failures.ERROR: a crashed run, no improvement


def improvement(score: float | None, baseline: float, lower_is_better: bool) -> float | None:
    """Relative improvement over the baseline in the metric's direction (0.1 = 10% better). A score
    <= 0 is missing, as MLAgentBench's plot.py counts it (its eval's failure placeholders)."""
    if score is None or score != score or score <= 0 or baseline == 0:
        return None
    gain = (baseline - score) if lower_is_better else (score - baseline)
    return gain / abs(baseline)


def research_success(gain: float | None) -> bool:
    """MLAgentBench's success: strictly more than 10% better than the baseline (its `>`; 1e-9 absorbs
    the float error of a gain of exactly 10%). The one place for the rule."""
    return gain is not None and gain > RESEARCH_SUCCESS_IMPROVEMENT + 1e-9


def research_outcome(run: Run) -> tuple[float | None, bool | None]:
    """(improvement over its task's baseline, success) of a run on a research task with a baseline;
    (None, None) for any other run. The run's competition must be loaded."""
    competition = run.competition
    if competition is None or competition.kind != Competition.Kind.RESEARCH or competition.baseline_score is None:
        return None, None
    if ERROR_CLASS in (run.failure_classes or []):
        return None, False
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
    tasks: list[TaskStats] = field(default_factory=list)


def research_results(runs: Iterable[Run]) -> list[ResearchStats]:
    """Per experiment, verified ones first (as on the board), then best success rate first. `runs`
    (oldest first) must have their competition loaded (kind research, baseline_score set)."""
    latest: dict[int, dict[tuple[int, int], Run]] = defaultdict(dict)
    experiments: dict[int, Experiment] = {}
    for run in runs:
        latest[run.experiment_id][(run.competition_id, run.seed)] = run
        experiments[run.experiment_id] = run.experiment
    results = [_experiment_stats(experiments[pk], list(counted.values())) for pk, counted in latest.items()]
    return sorted(results, key=lambda r: (not r.verified, -r.success_rate))


def _experiment_stats(experiment: Experiment, runs: list[Run]) -> ResearchStats:
    from leaderboard.analysis.stats import mean_sem, usage_basis

    gains = {run.pk: research_outcome(run)[0] for run in runs}
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
    )


def _task_stats(runs: list[Run], gains: dict[int, float | None]) -> list[TaskStats]:
    from leaderboard.analysis.stats import mean_sem

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

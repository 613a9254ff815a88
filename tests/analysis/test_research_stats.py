"""Research statistics against an independent computation: improvement and success in both metric
directions, and success rate / mean improvement as mean ± SEM over seeds, per task and overall."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from leaderboard.analysis import research
from leaderboard.models import Benchmark, Competition, Run
from tests.web.test_leaderboard import experiment


def by_hand(score, baseline, lower):
    """MLAgentBench's rule (its eval/plot: a score <= 0 is missing, success is strictly more than 10%),
    written out apart from the code under test."""
    if score <= 0:
        return None, False
    if lower:
        gain = -(score - baseline) / abs(baseline)
    else:
        gain = (score - baseline) / abs(baseline)
    return gain, gain > 0.10 + 1e-9


@pytest.mark.parametrize("lower", [False, True])
def test_improvement_and_success_in_both_directions(lower):
    rng = random.Random(7)
    for _ in range(500):
        baseline = rng.choice([-1, 1]) * rng.uniform(0.01, 100)  # a negative score is missing
        score = baseline * rng.uniform(0.5, 1.5)
        gain, success = by_hand(score, baseline, lower)
        if gain is None:
            assert research.improvement(score, baseline, lower) is None
            continue
        assert research.improvement(score, baseline, lower) == pytest.approx(gain)
        assert research.research_success(research.improvement(score, baseline, lower)) is success
    assert not research.research_success(research.improvement(0.55, 0.5, False))  # exactly 10%: not more
    assert research.research_success(research.improvement(0.5501, 0.5, False))
    assert not research.research_success(research.improvement(1.8, 2.0, True))
    assert research.research_success(research.improvement(1.79, 2.0, True))
    assert research.improvement(0.0, 0.5, False) is None and research.improvement(-3.0, 0.5, True) is None
    assert research.improvement(1.0, 0.0, False) is None and not research.research_success(None)


def research_task(slug: str, baseline: float, *, lower: bool) -> Competition:
    bench, _ = Benchmark.objects.get_or_create(slug="mlagentbench", defaults={"name": "MLAgentBench"})
    return Competition.objects.create(benchmark=bench, slug=slug, name=slug, kind=Competition.Kind.RESEARCH,
                                      baseline_score=baseline, is_lower_better=lower)


def sem(values):
    return float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else None


def test_mean_and_sem_over_seeds_per_task_and_overall(db):
    acc = research_task("acc-task", 0.5, lower=False)
    mae = research_task("mae-task", 20.0, lower=True)
    exp = experiment("ResearchAgent", "claude")
    scores = {(acc, 0): 0.6, (acc, 1): 0.52, (acc, 2): 0.75, (mae, 0): 15.0, (mae, 1): None, (mae, 2): 19.0}
    Run.objects.create(experiment=exp, competition=acc, seed=0, score=0.1, status=Run.Status.GRADED)  # replaced
    for (task, seed), score in scores.items():
        Run.objects.create(experiment=exp, competition=task, seed=seed, score=score, status=Run.Status.GRADED,
                           valid_submission=score is not None, duration_s=100.0 * (seed + 1), tokens_in=10,
                           tokens_out=5)
    gains = {key: None if s is None else by_hand(s, key[0].baseline_score, key[0].is_lower_better)[0]
             for key, s in scores.items()}
    success = {key: g is not None and g > 0.1 + 1e-9 for key, g in gains.items()}
    seed_success = [100 * np.mean([success[(t, s)] for t in (acc, mae)]) for s in range(3)]
    seed_gain = [100 * np.mean([gains[(t, s)] for t in (acc, mae) if gains[(t, s)] is not None]) for s in range(3)]

    [result] = research.research_results(research.research_runs(user=None))
    assert result.n_runs == 6 and result.n_seeds == 3
    assert result.success.mean == pytest.approx(np.mean(seed_success))
    assert result.success.sem == pytest.approx(sem(seed_success))
    assert result.improvement.mean == pytest.approx(np.mean(seed_gain))
    assert result.improvement.sem == pytest.approx(sem(seed_gain))
    assert result.mean_duration_s == pytest.approx(np.mean([100.0 * (s + 1) for _, s in scores]))
    assert result.mean_tokens == pytest.approx(15)
    per_task = {t.competition.slug: t for t in result.tasks}
    for task in (acc, mae):
        ok = [100.0 * success[(task, s)] for s in range(3)]
        known = [100 * gains[(task, s)] for s in range(3) if gains[(task, s)] is not None]
        row = per_task[task.slug]
        assert row.n_seeds == 3 and row.success.mean == pytest.approx(np.mean(ok))
        assert row.success.sem == pytest.approx(sem(ok))
        assert row.improvement.mean == pytest.approx(np.mean(known))
        assert row.improvement.sem == pytest.approx(sem(known))


def test_a_crashed_run_is_left_out_of_the_statistics_as_mlagentbench_does(db):
    """A job that failed without a submission, whose eval.py returned its placeholder (1e10): MLAgentBench's
    "error" class; plot.py drops such runs from every statistic (it made the mean -33712629153 % before).
    It is counted apart ("left out"), never as a score."""
    from leaderboard.runs.research import ResearchEvidence, record_research_result

    task = research_task("crash-task", 0.5, lower=False)
    exp = experiment("ResearchAgent", "claude")
    crashed = Run.objects.create(experiment=exp, competition=task, seed=0, status=Run.Status.GRADING)
    record_research_result(crashed, ResearchEvidence(score=1e10, job_status="failed", exit_code=1,
                                                     output="Traceback ...\nValueError", has_submission=False))
    good = Run.objects.create(experiment=exp, competition=task, seed=1, status=Run.Status.GRADING)
    record_research_result(good, ResearchEvidence(score=0.6, job_status="succeeded", has_submission=True))
    crashed.refresh_from_db()
    good.refresh_from_db()
    assert crashed.failure_classes[0] == "error" and not crashed.valid_submission and not crashed.submission_exists
    assert research.research_outcome(crashed) == (None, None)
    assert good.failure_classes == [] and good.valid_submission and good.submission_exists
    [result] = research.research_results(research.research_runs(user=None))
    gain = by_hand(0.6, 0.5, False)[0]
    assert result.n_runs == 1 and result.n_excluded == 1 and result.success_rate == pytest.approx(100.0)
    assert result.mean_improvement_pct == pytest.approx(100 * gain)  # the crash is not in the mean


def plot_py(final, steps, baseline, lower, threshold):
    """plot.py's improve_X and final_improve_X, written out apart: the best step's score is the max (min when
    lower is better) over the step scores and the final one, scores <= 0 left out; success is `>` X."""
    scores = [s for s in [*steps, final] if s is not None and s > 0]
    best = (min(scores) if lower else max(scores)) if scores else None

    def better(score):
        if score is None or score <= 0:
            return False
        change = (score - baseline) / baseline
        return -change > threshold if lower else change > threshold
    return better(final), better(best)


def test_success_at_every_threshold_for_the_final_and_the_best_step(db):
    from leaderboard.models import Snapshot

    acc = research_task("acc-t", 0.5, lower=False)
    mae = research_task("mae-t", 20.0, lower=True)
    exp = experiment("ResearchAgent", "gpt-4")
    rng = random.Random(3)
    cases = []
    for seed in range(12):
        for task in (acc, mae):
            base = task.baseline_score
            final = rng.choice([None, -1.0, base * rng.uniform(0.6, 1.4)])
            steps = [rng.choice([0.0, base * rng.uniform(0.6, 1.4)]) for _ in range(rng.randint(0, 4))]
            run = Run.objects.create(experiment=exp, competition=task, seed=seed, score=final,
                                     status=Run.Status.GRADED, valid_submission=final is not None, agent_steps=seed + 1)
            for i, score in enumerate(steps):
                Snapshot.objects.create(run=run, elapsed_seconds=10.0 * (i + 1), status=Snapshot.Status.GRADED,
                                        score=score, valid_submission=True)
            cases.append((final, steps, base, task.is_lower_better))
    [result] = research.research_results(research.research_runs(user=None))
    for pct in (5, 10, 15, 20, 30):
        final_ok = [plot_py(*case, pct / 100)[0] for case in cases]
        best_ok = [plot_py(*case, pct / 100)[1] for case in cases]
        assert result.success_at[pct] == pytest.approx(100 * np.mean(final_ok)), pct
        assert result.best_success_at[pct] == pytest.approx(100 * np.mean(best_ok)), pct
    assert result.mean_agent_steps == pytest.approx(np.mean([s + 1 for s in range(12)]))

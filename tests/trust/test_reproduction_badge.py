"""The reproduction badge and the comparison behind it, against a computation of their own (NumPy):
reproduced when, on every competition, the reproduction's mean score is within 2 SEM of the
original's seeds; not reproduced just outside it, with a seed scored on one side only, or with a
competition missing; pending while tasks are left, whatever the scores."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from leaderboard.models import Run
from leaderboard.trust.reproductions import NOT_REPRODUCED, PENDING, REPRODUCED, assess

RNG = np.random.default_rng(7)


def runs(scores: dict[int, list[float | None]], *, medals: dict[int, list[bool]] | None = None,
         origin: str = Run.Origin.JOB) -> list[Run]:
    """Unsaved graded runs: {competition id: score per seed (None: graded without a score)}."""
    made = []
    for competition, by_seed in scores.items():
        for seed, score in enumerate(by_seed):
            medal = medals[competition][seed] if medals else bool(score is not None and score > 0.5)
            made.append(Run(competition_id=competition, seed=seed, score=score, status=Run.Status.GRADED,
                            origin=origin, any_medal=medal, beats_human_pct=None if score is None else 100 * score))
    return made


def sem(values) -> float:
    return float(np.std(values, ddof=1) / math.sqrt(len(values)))


ORIGINAL = {1: list(RNG.normal(0.7, 0.05, 5)), 2: list(RNG.normal(0.3, 0.1, 5))}


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy, on differences all alike
@pytest.mark.parametrize(("sems", "badge"), [(1.9, REPRODUCED), (-1.9, REPRODUCED), (2.1, NOT_REPRODUCED),
                                            (-2.5, NOT_REPRODUCED)])
def test_within_two_sems_of_the_original_reproduces(sems, badge):
    """Competition 2's reproduction is moved by `sems` of the original's SEM (NumPy's); 1 stays put."""
    moved = {1: ORIGINAL[1], 2: [x + sems * sem(ORIGINAL[2]) for x in ORIGINAL[2]]}
    assessment = assess(runs(ORIGINAL), runs(moved))
    assert assessment.badge == badge
    first, second = assessment.rows
    assert first.within and second.within == (abs(sems) <= 2)
    assert second.tolerance == pytest.approx(2 * sem(ORIGINAL[2]), rel=1e-6)
    assert second.score_diff == pytest.approx(np.mean(moved[2]) - np.mean(ORIGINAL[2]))
    assert second.original.mean == pytest.approx(np.mean(ORIGINAL[2])) and second.original.sem == pytest.approx(
        sem(ORIGINAL[2]))


def test_the_paired_test_by_seed_matches_a_t_test_computed_by_hand():
    noisy = {c: [x + d for x, d in zip(xs, RNG.normal(0.01, 0.02, 5), strict=True)] for c, xs in ORIGINAL.items()}
    row = assess(runs(ORIGINAL), runs(noisy)).rows[0]
    d = np.array(noisy[1]) - np.array(ORIGINAL[1])
    t = d.mean() / (d.std(ddof=1) / math.sqrt(len(d)))
    assert row.score_test.t_pvalue == pytest.approx(2 * scipy_stats.t.sf(abs(t), len(d) - 1), rel=1e-9)
    assert row.score_test.sem_diff == pytest.approx(d.std(ddof=1) / math.sqrt(len(d)))


def test_without_a_spread_only_the_same_score_reproduces():
    same = {1: [0.8, 0.8, 0.8]}
    assert assess(runs(same), runs(same)).badge == REPRODUCED
    assert assess(runs({1: [0.8]}), runs({1: [0.8]})).badge == REPRODUCED  # one seed: no SEM, exact
    assert assess(runs(same), runs({1: [0.8, 0.8, 0.800001]})).badge == NOT_REPRODUCED
    assert assess(runs({1: [0.8]}), runs({1: [0.81]})).badge == NOT_REPRODUCED


def test_a_seed_scored_on_one_side_or_a_missing_competition_does_not_reproduce():
    row, = assess(runs({1: [0.5, 0.6, 0.7]}), runs({1: [0.5, 0.6, None]})).rows
    assert row.one_sided == [2] and row.seeds == [0, 1] and not row.within
    assessment = assess(runs(ORIGINAL), runs({1: ORIGINAL[1]}))
    assert assessment.badge == NOT_REPRODUCED and assessment.outside == [2]
    assert not assessment.rows[1].seeds and assessment.rows[1].reproduction.mean is None
    assert assess(runs(ORIGINAL), []).badge == NOT_REPRODUCED


def test_pending_while_tasks_are_left_whatever_the_scores():
    assert assess(runs(ORIGINAL), runs(ORIGINAL), unfinished_tasks=2).badge == PENDING
    assert assess(runs(ORIGINAL), [], unfinished_tasks=10).badge == PENDING


def test_only_the_originals_runs_from_jobs_are_compared():
    """An experiment may also hold uploads of the same configuration: nothing re-ran them."""
    mixed = runs(ORIGINAL) + runs({3: [0.9, 0.9]}, origin=Run.Origin.UPLOAD)
    assessment = assess(mixed, runs(ORIGINAL))
    assert assessment.badge == REPRODUCED and [r.competition_id for r in assessment.rows] == [1, 2]


def test_overall_medal_rates_are_paired_by_competition():
    medals_a = {1: [True, True, False, False], 2: [True, False, False, False], 3: [True, True, True, True]}
    medals_b = {1: [True, False, False, False], 2: [True, True, False, False], 3: [False, True, True, False]}
    scores = {c: [0.5] * 4 for c in medals_a}
    assessment = assess(runs(scores, medals=medals_a), runs(scores, medals=medals_b))
    rate_a = np.array([100 * np.mean(medals_a[c]) for c in (1, 2, 3)])
    rate_b = np.array([100 * np.mean(medals_b[c]) for c in (1, 2, 3)])
    assert assessment.original_medal_rate == pytest.approx(rate_a.mean())
    assert assessment.reproduction_medal_rate == pytest.approx(rate_b.mean())
    medal = assessment.overall.medal
    assert medal.n == 3 and medal.mean_diff == pytest.approx((rate_b - rate_a).mean())
    assert medal.sem_diff == pytest.approx(np.std(rate_b - rate_a, ddof=1) / math.sqrt(3))
    assert [row.original_medal_rate for row in assessment.rows] == pytest.approx(list(rate_a))
    assert assessment.badge == REPRODUCED  # the scores, not the medals, decide: they are equal here


def test_the_recipes_say_what_changed():
    original, again = runs({1: [0.5, 0.6]}), runs({1: [0.5, 0.6]})
    for run in original + again:
        run.recipe = {"agent": {"version": "v1", "image_id": "sha256:a"}, "data": {"version": "d1"},
                      "sandbox": {"backend": "docker", "runtime": "runc"}, "time_limit_s": 60}
    assert assess(original, again).changed == []
    again[1].recipe = {**again[1].recipe, "sandbox": {"backend": "docker", "runtime": "runsc"}}
    again[0].recipe = {**again[0].recipe, "data": {"version": "d2"}}
    assert assess(original, again).changed == ["data.version", "sandbox.runtime"]
    assert assess(runs({1: [0.5, 0.6]}), again).changed == []  # no recipes on one side: nothing to say


def test_a_reproduction_on_another_gpu_model_did_not_run_the_same_way():
    original, again = runs({1: [0.5, 0.6]}), runs({1: [0.5, 0.6]})
    for run, name in zip(original + again, ["NVIDIA A10"] * 3 + ["NVIDIA H100 80GB HBM3"], strict=True):
        run.recipe = {"agent": {"version": "v1"}, "hardware": {"gpu_names": [name], "gpu_driver": "550.54.15"}}
    assert assess(original, again).changed == ["hardware.gpu_names"]

"""MLE-bench's aggregation (per seed %, mean ± SEM ddof=1, complete seeds), pass@k, against hand-worked numbers."""

from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats

from leaderboard.analysis import stats
from leaderboard.models import Experiment, Run


def run(competition_id: int, seed: int, **flags) -> Run:
    medal = flags.pop("medal", None)
    fields = {"valid_submission": True, **flags}
    if medal:
        fields[f"{medal}_medal"] = True
        fields["any_medal"] = medal in ("gold", "silver", "bronze")
        fields["above_median"] = True
    return Run(competition_id=competition_id, seed=seed, **fields)


EXPERIMENT = Experiment(pk=1)
COMPETITIONS = {1, 2, 3, 4}


def hand_worked_runs() -> list[Run]:
    # seed 0: medals on 1 (gold) and 2 (bronze) -> 50%; seed 1: only 3 (silver) -> 25%;
    # seed 2: 1 (gold), 2 (silver), 3 (bronze) -> 75%; seed 3 has only two competitions: incomplete.
    return [
        run(1, 0, medal="gold"), run(2, 0, medal="bronze"), run(3, 0), run(4, 0, valid_submission=False),
        run(1, 1), run(2, 1), run(3, 1, medal="silver"), run(4, 1),
        run(1, 2, medal="gold"), run(2, 2, medal="silver"), run(3, 2, medal="bronze"), run(4, 2),
        run(1, 3, medal="gold"), run(2, 3, medal="gold"),
    ]


def test_mean_and_sem_match_scipy():
    values = [50.0, 25.0, 75.0, 12.5]
    estimate = stats.mean_sem(values)
    assert estimate.mean == pytest.approx(40.625)
    assert estimate.sem == pytest.approx(scipy_stats.sem(values, ddof=1))
    assert stats.mean_sem([30.0]).sem is None and stats.mean_sem([]).mean is None


def test_only_complete_seeds_count_by_default():
    result = stats.experiment_stats(EXPERIMENT, hand_worked_runs(), COMPETITIONS)
    assert result.seeds == [0, 1, 2] and result.incomplete_seeds == {3: 2}
    assert result.per_seed["any_medal"] == [50.0, 25.0, 75.0]
    assert result.metrics["any_medal"].mean == pytest.approx(50.0)
    assert result.metrics["any_medal"].sem == pytest.approx(scipy_stats.sem([50, 25, 75], ddof=1))
    assert result.metrics["any_medal"].sem == pytest.approx(25 / math.sqrt(3))  # sd 25 over 3 seeds
    assert result.per_seed["gold_medal"] == [25.0, 0.0, 25.0]
    assert result.per_seed["silver_medal"] == [0.0, 25.0, 25.0]
    assert result.per_seed["bronze_medal"] == [25.0, 0.0, 25.0]
    assert result.per_seed["valid_submission"] == [75.0, 100.0, 100.0]
    assert result.n_runs == 12


def test_padding_counts_missing_competitions_as_failures():
    result = stats.experiment_stats(EXPERIMENT, hand_worked_runs(), COMPETITIONS, pad=True)
    assert result.seeds == [0, 1, 2, 3]
    assert result.per_seed["any_medal"] == [50.0, 25.0, 75.0, 50.0]  # seed 3: 2 golds of 4 competitions
    assert result.metrics["any_medal"].sem == pytest.approx(scipy_stats.sem([50, 25, 75, 50], ddof=1))


def test_the_latest_run_of_a_competition_and_seed_counts():
    runs = [run(1, 0, medal="gold"), run(1, 0)]  # re-run later without a medal
    result = stats.experiment_stats(EXPERIMENT, runs, {1})
    assert result.per_seed["any_medal"] == [0.0]


def test_pass_at_k_hand_worked():
    assert stats.pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert stats.pass_at_k(3, 1, 2) == pytest.approx(2 / 3)  # 1 - C(2,2)/C(3,2) = 1 - 1/3
    assert stats.pass_at_k(4, 2, 2) == pytest.approx(5 / 6)  # 1 - C(2,2)/C(4,2) = 1 - 1/6
    assert stats.pass_at_k(5, 0, 3) == 0.0 and stats.pass_at_k(3, 2, 2) == 1.0
    with pytest.raises(ValueError):
        stats.pass_at_k(1, 0, 2)


def test_pass_at_k_averaged_over_the_split():
    # Complete seeds 0-2. Medals per competition over 3 seeds: c1=2, c2=2, c3=2, c4=0.
    result = stats.experiment_stats(EXPERIMENT, hand_worked_runs(), COMPETITIONS, ks=(1, 2, 3, 4))
    assert result.pass_at[1] == pytest.approx(100 * (2 / 3 * 3 + 0) / 4)  # = mean any-medal %, 50
    assert result.pass_at[2] == pytest.approx(100 * (1.0 * 3 + 0) / 4)  # 1 - C(1,2)/C(3,2) = 1
    assert result.pass_at[4] is None  # only 3 attempts


def test_verified_only_when_every_counted_run_was_graded_here():
    runs = [run(1, 0, verification="verified"), run(1, 1, verification="self_reported")]
    assert not stats.experiment_stats(EXPERIMENT, runs, {1}).verified
    assert stats.experiment_stats(EXPERIMENT, runs[:1], {1}).verified


def test_cost_and_tokens_are_means_where_known():
    runs = [run(1, 0, cost_usd=2.0, tokens_in=100, tokens_out=50), run(1, 1, cost_usd=None), run(1, 2, cost_usd=4.0)]
    result = stats.experiment_stats(EXPERIMENT, runs, {1})
    assert result.cost_usd == pytest.approx(3.0) and result.tokens == pytest.approx(150)


def test_split_aliases(catalogue):
    assert stats.resolve_split("lite").slug == "low"
    assert stats.resolve_split("all").competitions.count() == 75
    assert stats.resolve_split("lite").competitions.count() == 22


def test_pareto_front_hand_worked():
    # (cost, score): B is beaten by A (cheaper and better); D ties C on cost but scores less.
    points = [(1.0, 10.0), (2.0, 5.0), (3.0, 30.0), (3.0, 20.0), (5.0, 25.0), (6.0, 40.0)]
    assert stats.pareto_front(points) == [(1.0, 10.0), (3.0, 30.0), (6.0, 40.0)]
    assert stats.pareto_front([]) == []

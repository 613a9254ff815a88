"""Hand-worked medal cases: positions by team count, direction, ties, exclusivity, median."""

import pytest

from leaderboard.competitions import medals


@pytest.mark.parametrize(
    ("n", "gold", "silver", "bronze"),
    [
        (1, 1, 1, 1),        # max(1, int(0.1)) everywhere
        (9, 1, 1, 3),        # int(0.9)=0 -> 1, int(1.8)=1, int(3.6)=3
        (99, 9, 19, 39),     # int(9.9), int(19.8), int(39.6)
        (100, 10, 20, 40),   # 100-249: gold fixed at 10
        (249, 10, 49, 99),   # int(49.8), int(99.6)
        (250, 10, 50, 100),  # 250-999: 10 + int(0.5), 50, 100
        (999, 11, 50, 100),  # 10 + int(1.998)
        (1000, 12, 50, 100), # 1000+: 10 + int(2.0), int(50.0), int(100.0)
        (1967, 13, 98, 196), # spaceship-titanic: 10 + int(3.934), int(98.35), int(196.7)
        (5000, 20, 250, 500),
    ],
)
def test_medal_positions(n, gold, silver, bronze):
    assert medals.medal_positions(n) == (gold, silver, bronze)


def test_no_teams_is_an_error():
    with pytest.raises(ValueError):
        medals.medal_positions(0)


def test_thresholds_higher_is_better():
    scores = [0.9 - i * 0.01 for i in range(100)]  # 0.90, 0.89, ... 0.01
    t = medals.compute_thresholds(scores)
    assert not t.is_lower_better
    assert t.gold == pytest.approx(0.81)    # row 10
    assert t.silver == pytest.approx(0.71)  # row 20
    assert t.bronze == pytest.approx(0.51)  # row 40
    assert t.median == pytest.approx((0.41 + 0.40) / 2)  # mean of rows 50 and 51


def test_thresholds_lower_is_better():
    scores = [float(i) for i in range(1, 251)]  # 1 .. 250, best (lowest) first
    t = medals.compute_thresholds(scores)
    assert t.is_lower_better
    assert (t.gold, t.silver, t.bronze) == (10.0, 50.0, 100.0)
    assert t.median == 125.5


def test_single_team():
    t = medals.compute_thresholds([0.5])
    assert (t.gold, t.silver, t.bronze, t.median) == (0.5, 0.5, 0.5, 0.5)
    assert not t.is_lower_better  # first == last: MLE-bench reads that as higher-is-better
    assert medals.award(0.5, t) == medals.Medals(gold=True, above_median=False)


def _t(lower: bool) -> medals.Thresholds:
    if lower:
        return medals.Thresholds(n_teams=100, is_lower_better=True, gold=1.0, silver=2.0, bronze=3.0, median=5.0)
    return medals.Thresholds(n_teams=100, is_lower_better=False, gold=0.9, silver=0.8, bronze=0.7, median=0.5)


@pytest.mark.parametrize(
    ("score", "label", "above_median"),
    [(0.95, "gold", True), (0.9, "gold", True), (0.85, "silver", True), (0.8, "silver", True),
     (0.7, "bronze", True), (0.69999, "above median", True), (0.5, "none", False), (0.1, "none", False)],
)
def test_award_higher_is_better_with_ties(score, label, above_median):
    awarded = medals.award(score, _t(lower=False))
    assert awarded.label == label
    assert awarded.above_median is above_median
    assert [awarded.gold, awarded.silver, awarded.bronze].count(True) <= 1  # exclusive


@pytest.mark.parametrize(
    ("score", "label", "above_median"),
    [(0.5, "gold", True), (1.0, "gold", True), (1.5, "silver", True), (3.0, "bronze", True),
     (4.99, "above median", True), (5.0, "none", False), (9.0, "none", False)],
)
def test_award_lower_is_better_with_ties(score, label, above_median):
    awarded = medals.award(score, _t(lower=True))
    assert awarded.label == label
    assert awarded.above_median is above_median


def test_score_rounded_to_five_decimals_before_comparison():
    t = _t(lower=False)
    assert medals.award(0.899996, t).gold  # rounds to 0.9: a tie, and ties win
    assert not medals.award(0.899994, t).gold  # rounds to 0.89999


def test_no_score_or_no_leaderboard_earns_nothing():
    assert medals.award(None, _t(False)) == medals.NO_MEDALS
    assert medals.award(0.99, None) == medals.NO_MEDALS
    assert medals.award(float("nan"), _t(False)) == medals.NO_MEDALS


def test_placing_counts_ties_as_shared_rank():
    scores = [0.9, 0.8, 0.8, 0.7, 0.6]
    assert medals.place(0.8, scores, lower_is_better=False) == medals.Placing(rank=2, beats_pct=40.0)
    assert medals.place(0.95, scores, lower_is_better=False) == medals.Placing(rank=1, beats_pct=100.0)
    assert medals.place(0.5, scores, lower_is_better=False) == medals.Placing(rank=6, beats_pct=0.0)
    assert medals.place(0.65, scores, lower_is_better=True) == medals.Placing(rank=2, beats_pct=80.0)

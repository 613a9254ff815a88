"""Each metric of the registry against scikit-learn / scipy or a hand-worked case."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as sk

from leaderboard.grading.metrics import METRICS, get_metric, ranking, text

RNG = np.random.default_rng(7)
N = 500


def _binary(n=N):
    y = RNG.integers(0, 2, n)
    return y, np.clip(y * 0.3 + RNG.random(n) * 0.7, 0, 1)


def test_roc_auc_matches_sklearn_including_ties():
    y, p = _binary()
    p = np.round(p, 1)  # many ties
    assert get_metric("roc-auc").fn(y, p) == pytest.approx(sk.roc_auc_score(y, p), abs=1e-12)


def test_roc_auc_hand_worked():
    # positives 0.8, 0.4; negatives 0.6, 0.2: of 4 pairs, 3 ordered correctly -> 0.75
    assert get_metric("roc-auc").fn(np.array([1, 1, 0, 0]), np.array([0.8, 0.4, 0.6, 0.2])) == 0.75


def test_roc_auc_single_class_is_an_error():
    with pytest.raises(ValueError, match="one class"):
        get_metric("roc-auc").fn(np.ones(4), np.linspace(0, 1, 4))


def test_mean_columnwise_auc_matches_sklearn_macro():
    y = RNG.integers(0, 2, (N, 4))
    p = RNG.random((N, 4))
    ours = get_metric("mean-column-wise-roc-auc").fn(y, p)
    assert ours == pytest.approx(sk.roc_auc_score(y, p, average="macro"), abs=1e-12)


def test_binary_log_loss_matches_sklearn_with_clipping():
    y, p = _binary()
    p[:3] = [0.0, 1.0, 0.5]  # clipped at float eps, as sklearn does
    assert get_metric("log-loss").fn(y, p) == pytest.approx(sk.log_loss(y, p), rel=1e-12)


def test_multiclass_log_loss_matches_sklearn():
    classes = RNG.integers(0, 5, N)
    y = np.eye(5)[classes]
    p = RNG.random((N, 5))
    p /= p.sum(axis=1, keepdims=True)
    assert get_metric("multi-class-log-loss").fn(y, p) == pytest.approx(sk.log_loss(y, p), rel=1e-12)


@pytest.mark.parametrize(
    "name,reference",
    [
        ("rmse", lambda y, p: sk.root_mean_squared_error(y, p)),
        ("rmsle", lambda y, p: sk.root_mean_squared_log_error(y, p)),
        ("mae", sk.mean_absolute_error),
    ],
)
def test_regression_metrics_match_sklearn(name, reference):
    y, p = RNG.random(N) * 10, RNG.random(N) * 10
    assert get_metric(name).fn(y, p) == pytest.approx(reference(y, p), rel=1e-12)


def test_mean_columnwise_rmsle_hand_worked():
    y = np.array([[0.0, np.e - 1], [0.0, np.e - 1]])
    p = np.array([[np.e - 1, np.e - 1], [np.e - 1, np.e - 1]])
    # column 0 is off by exactly 1 in log space, column 1 is exact: mean of (1, 0)
    assert get_metric("mean-column-wise-rmsle").fn(y, p) == pytest.approx(0.5)


def test_quadratic_kappa_matches_sklearn():
    y, p = RNG.integers(0, 5, N), RNG.integers(0, 5, N)
    p[: N // 2] = y[: N // 2]
    expected = sk.cohen_kappa_score(y, p, weights="quadratic")
    assert get_metric("quadratic-weighted-kappa").fn(y, p) == pytest.approx(expected, rel=1e-12)


def test_quadratic_kappa_with_labels_missing_from_one_side():
    y, p = np.array([1, 2, 3, 4, 4]), np.array([0, 2, 3, 3, 4])
    expected = sk.cohen_kappa_score(y, p, weights="quadratic")
    assert get_metric("quadratic-weighted-kappa").fn(y, p) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "name,reference",
    [
        ("accuracy", sk.accuracy_score),
        ("f1-micro", lambda y, p: sk.f1_score(y, p, average="micro")),
        ("f1-macro", lambda y, p: sk.f1_score(y, p, average="macro")),
        ("mcc", sk.matthews_corrcoef),
    ],
)
def test_classification_metrics_match_sklearn(name, reference):
    y, p = RNG.integers(0, 4, N), RNG.integers(0, 4, N)
    assert get_metric(name).fn(y, p) == pytest.approx(reference(y, p), rel=1e-12)


def test_accuracy_on_strings():
    assert get_metric("accuracy").fn(np.array(["a", "b", "c"], dtype=object), np.array(["a", "x", "c"])) == 2 / 3


def test_map_at_5_hand_worked():
    y = np.array(["w1", "w2", "w3", "w4"], dtype=object)
    p = np.array(["w1 a b c d", "a w2 b", "a b c d e w3", "w4 w4 a"], dtype=object)
    assert get_metric("map@5").fn(y, p) == pytest.approx((1 + 0.5 + 0 + 1) / 4)


def test_map_counts_a_repeated_guess_once():
    assert ranking.average_precision_at_k("x", "a a a a a x", 5) == pytest.approx(1 / 2)


@pytest.mark.parametrize("name,reference", [("pearson", stats.pearsonr), ("spearman", stats.spearmanr)])
def test_correlations_match_scipy(name, reference):
    y, p = RNG.random(N), RNG.random(N)
    assert get_metric(name).fn(y, p) == pytest.approx(reference(y, p).statistic, rel=1e-12)


def test_jaccard_hand_worked():
    assert text.jaccard_words("The cat sat", "the CAT ran") == pytest.approx(2 / 4)
    assert get_metric("jaccard").fn(np.array(["a b", ""]), np.array(["a b", ""])) == 1.0


@pytest.mark.parametrize("a,b,d", [("kitten", "sitting", 3), ("", "abc", 3), ("flaw", "lawn", 2), ("same", "same", 0)])
def test_levenshtein_hand_worked(a, b, d):
    assert text.levenshtein(a, b) == d


def test_registry_directions():
    lower = {name for name, metric in METRICS.items() if metric.lower_is_better}
    assert lower == {"log-loss", "multi-class-log-loss", "rmse", "rmsle", "mean-column-wise-rmsle", "mae",
                     "mle-bench-rounded-mae",
                     "levenshtein", "top-1-error", "mean-angular-error", "mean-column-wise-rmse",
                     "mean-group-log-mae", "kl-divergence-of-votes", "gesture-edit-distance",
                     "trip-haversine-p50-p95", "cervical-weighted-log-loss"}


def test_mean_angular_error_hand_worked():
    # (azimuth, zenith): the z axis against the x axis is a right angle; a direction against itself is 0
    y_true = np.array([[0.0, 0.0], [1.0, np.pi / 2]])
    y_pred = np.array([[0.0, np.pi / 2], [1.0, np.pi / 2]])
    assert get_metric("mean-angular-error").fn(y_true, y_pred) == pytest.approx(np.pi / 4)


def test_weighted_auc_perfect_and_reversed():
    y = np.array([0, 0, 1, 1])
    assert get_metric("weighted-auc").fn(y, np.array([0.1, 0.2, 0.8, 0.9])) == pytest.approx(1.0)
    assert get_metric("weighted-auc").fn(y, np.array([0.9, 0.8, 0.2, 0.1])) == pytest.approx(0.0)


def test_weighted_auc_hand_worked():
    # ROC vertices (0,0) (0,.5) (.5,.5) (.5,1) (1,1): band [0,.4] is full (area .4, weight 2); band [.4,1]
    # covers .1 over FPR [0,1] and .5 over FPR [.5,1] -> .1 + .25 = .35 (weight 1); (0.8 + 0.35) / 1.4
    y, p = np.array([1, 0, 1, 0]), np.array([0.9, 0.7, 0.5, 0.1])
    assert get_metric("weighted-auc").fn(y, p) == pytest.approx(1.15 / 1.4)


def test_mean_columnwise_spearman_matches_scipy():
    y, p = RNG.random((N, 3)), RNG.random((N, 3))
    expected = np.mean([stats.spearmanr(y[:, k], p[:, k]).statistic for k in range(3)])
    assert get_metric("mean-column-wise-spearman").fn(y, p) == pytest.approx(expected, abs=1e-12)


def test_top1_error_reads_the_first_class_id():
    truth = np.array(["3", "4", "5"], dtype=object)
    assert get_metric("top-1-error").fn(truth, np.array(["3 9 9", "9 4", "5"], dtype=object)) == pytest.approx(1 / 3)


def test_mean_columnwise_rmse_hand_worked():
    # column errors (3, 4) and (0, 0): RMSEs sqrt(12.5) and 0
    y = np.zeros((2, 2))
    assert get_metric("mean-column-wise-rmse").fn(y, np.array([[3.0, 0.0], [4.0, 0.0]])) == pytest.approx(
        np.sqrt(12.5) / 2)


def test_mle_bench_map_hand_worked():
    # a set of three truths: hits at ranks 1 and 3 -> (1/1 + 2/3) / min(3, 12)
    y = np.array(["a b c", "x"], dtype=object)
    p = np.array(["a z b", "q x x"], dtype=object)
    assert get_metric("mle-bench-map@12").fn(y, p) == pytest.approx(((1 + 2 / 3) / 3 + 1 / 2) / 2)


def test_mle_bench_map_spends_ranks_on_repeats_and_empty_tokens():
    y = np.array(["x", "x"], dtype=object)
    p = np.array(["a a a a a x", "a  x"], dtype=object)  # x is sixth (past k=5); third after a double space
    assert get_metric("mle-bench-map@5").fn(y, p) == pytest.approx((0 + 1 / 3) / 2)


def test_f1_micro_label_sets_matches_sklearn_on_known_labels():
    y = np.array(["a b", "c", "a"], dtype=object)
    p = np.array(["a zz", "c b", ""], dtype=object)  # zz is no class: ignored; tp 2, fp 1 (b), fn 2
    assert get_metric("f1-micro-label-sets").fn(y, p) == pytest.approx(4 / 7)


def test_jaccard_samples_scores_two_empty_rows_zero_unlike_kaggle_jaccard():
    y, p = np.array(["A b", ""], dtype=object), np.array(["a c", ""], dtype=object)
    assert get_metric("jaccard-samples").fn(y, p) == pytest.approx((1 / 3 + 0) / 2)
    assert get_metric("jaccard").fn(y, p) == pytest.approx((1 / 3 + 1) / 2)


def test_lwlrap_weights_rows_by_their_labels_and_skips_unlabelled_ones():
    y = np.array([[1, 1, 0], [0, 0, 1], [0, 0, 0]])
    p = np.array([[0.9, 0.1, 0.5], [0.9, 0.1, 0.5], [0.1, 0.2, 0.3]])
    # row 1: labels ranked 1st (1/1) and 3rd (2/3); row 2: its label ranked 2nd (1/2); label-weighted mean
    assert get_metric("lwlrap").fn(y, p) == pytest.approx((1 + 2 / 3 + 1 / 2) / 3)


def test_mean_group_log_mae_hand_worked():
    y, p = np.array([1.0, 2.0, 10.0, 10.0]), np.array([2.0, 4.0, 10.5, 9.5])
    groups = np.array(["1JHC", "1JHC", "3JHH", "3JHH"], dtype=object)
    assert get_metric("mean-group-log-mae").fn(y, p, groups) == pytest.approx((np.log(1.5) + np.log(0.5)) / 2)


def test_kl_divergence_of_votes_hand_worked():
    votes = np.array([[3, 1, 0], [0, 0, 2]])
    p = np.array([[0.5, 0.5, 0.0], [0.2, 0.0, 0.8]])
    expected = (0.75 * np.log(0.75 / 0.5) + 0.25 * np.log(0.25 / 0.5) + np.log(1 / 0.8)) / 2
    assert get_metric("kl-divergence-of-votes").fn(votes, p) == pytest.approx(expected)


def test_gesture_edit_distance_counts_gestures_not_characters():
    y = np.array(["1 12 3", "5"], dtype=object)
    p = np.array(["1 2 3 4", "5"], dtype=object)  # 12 -> 2 and one insertion: 2 edits over 4 gestures
    assert get_metric("gesture-edit-distance").fn(y, p) == pytest.approx(2 / 4)


def test_trip_haversine_hand_worked():
    # one degree of latitude is 6,371,000 * pi / 180 metres; trip a: distances 0 and 1 degree, trip b: 0
    degree = 6_371_000 * np.pi / 180
    y = np.array([[10.0, 20.0], [10.0, 20.0], [-5.0, 100.0]])
    p = np.array([[10.0, 20.0], [11.0, 20.0], [-5.0, 100.0]])
    trips = np.array(["a", "a", "b"], dtype=object)
    trip_a = (0.5 * degree + 0.95 * degree) / 2  # linear quantiles of [0, degree]
    assert get_metric("trip-haversine-p50-p95").fn(y, p, trips) == pytest.approx(trip_a / 2)


def _edit_distance_table(a, b):
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def test_bit_parallel_levenshtein_matches_the_dynamic_programme():
    rng = np.random.default_rng(3)
    for _ in range(3000):
        a, b = ("".join(rng.choice(list("ab c"), rng.integers(0, n))) for n in rng.choice([6, 14, 90], 2))
        assert text.levenshtein(a, b) == _edit_distance_table(a, b), (a, b)
    assert text.levenshtein([1, 12, 3], [1, 2, 3, 4]) == 2

"""The metrics added for the structured competitions, each against an independent computation: the
host's formula written out with Python loops, scipy or scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn import metrics as sk

from leaderboard.grading.metrics import get_metric
from leaderboard.grading.validation import SubmissionError


@pytest.fixture
def rng():
    return np.random.default_rng(12)


def _pfbeta_loop(labels, predictions):
    """The host's probabilistic F-score, beta = 1, one row at a time."""
    count = ctp = cfp = 0.0
    for label, prediction in zip(labels, predictions, strict=True):
        prediction = min(max(prediction, 0.0), 1.0)
        count += label
        ctp, cfp = (ctp + prediction, cfp) if label else (ctp, cfp + prediction)
    precision = ctp / (ctp + cfp) if ctp + cfp else 0.0
    recall = ctp / count
    return 2 * precision * recall / (precision + recall) if precision > 0 and recall > 0 else 0.0


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_probabilistic_f1_matches_the_hosts_loop(scale, rng):
    labels = (rng.random(500) < 0.1).astype(int)
    predictions = (labels * 0.5 + rng.random(500) * 0.6 - 0.1) * scale  # some below 0 and above 1
    assert get_metric("probabilistic-f1").fn(labels, predictions) == pytest.approx(_pfbeta_loop(labels, predictions))
    assert 0 < get_metric("probabilistic-f1").fn(labels, predictions) < 1


def test_probabilistic_f1_of_all_zero_predictions_is_zero():
    assert get_metric("probabilistic-f1").fn(np.array([1, 0, 1]), np.zeros(3)) == 0.0
    assert get_metric("probabilistic-f1").fn(np.array([1, 0, 0]), np.array([1.0, 0, 0])) == 1.0


def test_cervical_weighted_log_loss_matches_a_loop_over_studies(rng):
    labels = ["patient_overall", *(f"C{k}" for k in range(1, 8))]
    studies = [f"1.2.826.0.1.3680043.{k}" for k in rng.permutation(1000)[:40]]
    rows = [(f"{s}_{label}", s, label) for s in studies for label in labels]
    order = rng.permutation(len(rows))  # rows in any order: the metric regroups them
    ids = np.array([rows[i][0] for i in order], dtype=object)
    y = (rng.random(len(rows)) < 0.3).astype(int)
    p = np.clip(y * 0.4 + rng.random(len(rows)) * 0.6, 0, 1)
    p[:3] = [0.0, 1.0, 1.0]  # clipped to 1e-15 and 1 - 1e-15
    truth = {rid: (yy, pp) for rid, yy, pp in zip(ids, y, p, strict=True)}
    per_study = []
    for s in studies:
        total = weights = 0.0
        for label in labels:
            yy, pp = truth[f"{s}_{label}"]
            pp = min(max(pp, 1e-15), 1 - 1e-15)
            w = (14 if label == "patient_overall" else 2) if yy else (7 if label == "patient_overall" else 1)
            total += w * -(yy * math.log(pp) + (1 - yy) * math.log(1 - pp))
            weights += w
        per_study.append(total / weights)
    assert get_metric("cervical-weighted-log-loss").fn(y, p, ids) == pytest.approx(np.mean(per_study))


def test_osic_scores_the_three_latest_measured_weeks_like_grade_py(rng):
    patients = [f"ID0042{k:05d}" for k in range(12)]
    rows = [(p, w) for p in patients for w in range(-5, 40)]
    frame = pd.DataFrame(rows, columns=["Patient", "Weeks"])
    frame["Patient_Week"] = frame["Patient"] + "_" + frame["Weeks"].astype(str)
    frame["FVC"] = np.where(rng.random(len(frame)) < 0.3, rng.normal(2500, 600, len(frame)), np.nan)
    pred = np.column_stack([rng.normal(2500, 700, len(frame)), rng.uniform(20, 400, len(frame))])
    # grade.py: drop unmeasured weeks, keep each patient's last three by week number, sort by Patient_Week
    kept = frame.dropna(subset=["FVC"]).sort_values("Weeks").groupby("Patient").tail(3)
    sigma = np.maximum(pred[kept.index, 1], 70)
    delta = np.minimum(np.abs(kept["FVC"].to_numpy() - pred[kept.index, 0]), 1000)
    expected = np.mean(-np.sqrt(2) * delta / sigma - np.log(np.sqrt(2) * sigma))
    context = frame[["Patient", "Patient_Week"]].to_numpy(dtype=object)
    score = get_metric("osic-laplace-log-likelihood").fn(frame["FVC"].to_numpy(), pred, context)
    assert score == pytest.approx(expected) and len(kept) == 36


def test_kendall_tau_of_orders_matches_scipy_summed_over_notebooks(rng):
    truths, orders, inversions, pairs = [], [], 0.0, 0
    for n in rng.integers(2, 60, 30):
        cells = [f"{x:08x}" for x in rng.permutation(2**20)[:n]]
        order = list(cells)
        for _ in range(rng.integers(0, n)):  # a few swaps: partly right
            i, j = rng.integers(0, n, 2)
            order[i], order[j] = order[j], order[i]
        truths.append(" ".join(cells))
        orders.append(" ".join(order))
        tau = stats.kendalltau(np.arange(n), [cells.index(c) for c in order]).statistic
        inversions += (1 - tau) * n * (n - 1) / 4  # tau = 1 - 4 inversions / (n (n - 1)) without ties
        pairs += n * (n - 1)
    expected = 1 - 4 * inversions / pairs
    score = get_metric("kendall-tau-orders").fn(np.array(truths, dtype=object), np.array(orders, dtype=object))
    assert score == pytest.approx(expected) and -1 < score < 1


@pytest.mark.parametrize("order", ["a b", "a b c c", "a b d", "a a b"])
def test_kendall_tau_rejects_an_order_that_is_not_the_notebooks_cells(order):
    with pytest.raises(SubmissionError, match="must list each of the notebook's 3 cells once"):
        get_metric("kendall-tau-orders").fn(np.array(["a b c"]), np.array([order]))


def test_qa_micro_f1_matches_scikit_learn_on_grade_pys_labels():
    acceptable = ["", "10:20", "5:9 7:9", "YES", "3:4 NO", ""]
    predictions = ["", "10:20", "7:9", "NO", "", "1:2"]
    # grade.py's rules by hand: (true, predicted) per row
    labels = [(0, 0), (1, 1), (1, 1), (0, 1), (1, 0), (0, 1)]
    expected = sk.f1_score([t for t, _ in labels], [p for _, p in labels], average="micro")
    score = get_metric("qa-micro-f1").fn(np.array(acceptable, dtype=object), np.array(predictions, dtype=object))
    assert score == pytest.approx(expected) == pytest.approx(3 / 6)


@pytest.mark.parametrize("prediction", ["yes", "1:2:3", "a:b", "12", "1-2"])
def test_qa_rejects_a_prediction_that_is_not_a_span_yes_no_or_empty(prediction):
    with pytest.raises(SubmissionError, match="is not 'start_token:end_token', YES, NO or empty"):
        get_metric("qa-micro-f1").fn(np.array(["1:2"]), np.array([prediction], dtype=object))


def test_qa_reads_a_span_as_numbers_like_grade_py():
    assert get_metric("qa-micro-f1").fn(np.array(["10:20"]), np.array([" 010:20 "], dtype=object)) == 1.0

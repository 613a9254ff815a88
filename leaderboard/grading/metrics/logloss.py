"""Log loss exactly as sklearn computes it: clip to [eps, 1 - eps] of float64, natural log; Kaggle's
KL divergence of vote distributions (HMS); RSNA 2022's label-weighted multi-label log loss."""

from __future__ import annotations

import numpy as np
import pandas as pd

EPS = np.finfo(np.float64).eps


def binary_log_loss(y_true: np.ndarray, y_prob: np.ndarray) -> float:
    p = np.clip(np.asarray(y_prob, dtype=np.float64), EPS, 1 - EPS)
    y = np.asarray(y_true, dtype=np.float64)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def multiclass_log_loss(y_true: np.ndarray, y_prob: np.ndarray) -> float:
    """`y_true` one-hot (n, k), `y_prob` (n, k); sklearn does not renormalise rows, nor do we."""
    p = np.clip(np.asarray(y_prob, dtype=np.float64), EPS, 1 - EPS)
    y = np.asarray(y_true, dtype=np.float64)
    # Only the true-class terms contribute; skipping zeros avoids 0 * log(p) work on wide frames.
    return float(-np.sum(np.log(p[y != 0]) * y[y != 0]) / y.shape[0])


def kl_divergence_of_votes(votes: np.ndarray, y_pred: np.ndarray) -> float:
    """HMS' KL divergence: votes become distributions (divided by the row total), predictions are
    clipped to [1e-15, 1 - 1e-15], terms where the target is 0 count 0; the mean of row sums."""
    votes = np.asarray(votes, dtype=np.float64)
    target = votes / votes.sum(axis=1, keepdims=True)
    predicted = np.clip(np.asarray(y_pred, dtype=np.float64), 1e-15, 1 - 1e-15)
    positive = target > 0
    terms = np.zeros_like(target)
    terms[positive] = target[positive] * np.log(target[positive] / predicted[positive])
    return float(np.mean(terms.sum(axis=1)))


CERVICAL_COLUMNS = ("patient_overall", "C1", "C2", "C3", "C4", "C5", "C6", "C7")
CERVICAL_WEIGHTS = {0: np.array([7, 1, 1, 1, 1, 1, 1, 1.0]), 1: np.array([14, 2, 2, 2, 2, 2, 2, 2.0])}


def cervical_weighted_log_loss(y_true: np.ndarray, y_prob: np.ndarray, row_ids: np.ndarray) -> float:
    """RSNA 2022 cervical spine: rows '<study>_<label>' pivoted to one row per study and the 8 labels;
    per study the weighted mean of binary log losses (clip 1e-15), negatives weighted 7 / 1 and positives
    14 / 2 (patient_overall / each vertebra); the score is the mean over studies."""
    study, label = pd.Series(row_ids, dtype=object).str.split("_", n=1, expand=True).T.to_numpy()
    frame = pd.DataFrame({"study": study, "label": label, "y": np.asarray(y_true, np.float64),
                          "p": np.asarray(y_prob, np.float64)})
    wide = frame.pivot(index="study", columns="label")
    y, p = wide["y"][list(CERVICAL_COLUMNS)].to_numpy(), wide["p"][list(CERVICAL_COLUMNS)].to_numpy()
    p = np.clip(p, 1e-15, 1 - 1e-15)
    losses = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    weights = y * CERVICAL_WEIGHTS[1] + (1 - y) * CERVICAL_WEIGHTS[0]
    return float(np.mean(np.sum(losses * weights, axis=1) / weights.sum(axis=1)))

"""Log loss exactly as sklearn computes it: clip to [eps, 1 - eps] of float64, natural log; and Kaggle's
KL divergence of vote distributions (HMS)."""

from __future__ import annotations

import numpy as np

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

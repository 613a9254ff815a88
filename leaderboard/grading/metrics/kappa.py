"""Quadratic weighted Cohen kappa over integer ratings (sklearn's cohen_kappa_score, weights='quadratic')."""

from __future__ import annotations

import numpy as np


def quadratic_weighted_kappa(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    labels, codes = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    k = labels.size
    true_codes, pred_codes = codes[: len(y_true)], codes[len(y_true):]
    observed = np.bincount(true_codes * k + pred_codes, minlength=k * k).reshape(k, k).astype(np.float64)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    # Like sklearn, weights use label positions, not label values.
    weights = (np.arange(k)[:, None] - np.arange(k)[None, :]) ** 2
    denominator = np.sum(weights * expected)
    if denominator == 0:
        return 1.0 if np.sum(weights * observed) == 0 else 0.0
    return float(1 - np.sum(weights * observed) / denominator)

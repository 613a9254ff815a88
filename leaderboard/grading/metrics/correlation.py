"""Correlations: Pearson, Spearman and the column-wise mean of Spearman (scipy)."""

from __future__ import annotations

import numpy as np
from scipy import stats


def pearson(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(stats.pearsonr(np.asarray(y_true, float), np.asarray(y_pred, float)).statistic)


def spearman(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(stats.spearmanr(np.asarray(y_true, float), np.asarray(y_pred, float)).statistic)


def mean_columnwise_spearman(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean over columns of Spearman's rho; a constant column makes it NaN (undefined), as in scipy."""
    y_true, y_pred = np.atleast_2d(y_true.T).T, np.atleast_2d(y_pred.T).T
    return float(np.mean([spearman(y_true[:, k], y_pred[:, k]) for k in range(y_true.shape[1])]))

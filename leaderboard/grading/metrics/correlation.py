"""Correlations: Pearson and Spearman (scipy)."""

from __future__ import annotations

import numpy as np
from scipy import stats


def pearson(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(stats.pearsonr(np.asarray(y_true, float), np.asarray(y_pred, float)).statistic)


def spearman(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(stats.spearmanr(np.asarray(y_true, float), np.asarray(y_pred, float)).statistic)

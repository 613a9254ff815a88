"""Regression errors: RMSE, RMSLE (and their column-wise means), MAE, and CHAMPS' mean log MAE by group."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _floats(values: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.sqrt(np.mean((_floats(y_true) - _floats(y_pred)) ** 2)))


def mean_columnwise_rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """MCRMSE: the mean over columns of each column's RMSE."""
    y_true, y_pred = np.atleast_2d(y_true.T).T, np.atleast_2d(y_pred.T).T
    return float(np.mean([rmse(y_true[:, k], y_pred[:, k]) for k in range(y_true.shape[1])]))


def rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return rmse(np.log1p(_floats(y_true)), np.log1p(_floats(y_pred)))


def mean_columnwise_rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    y_true, y_pred = np.atleast_2d(y_true.T).T, np.atleast_2d(y_pred.T).T
    return float(np.mean([rmsle(y_true[:, k], y_pred[:, k]) for k in range(y_true.shape[1])]))


def mae(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean(np.abs(_floats(y_true) - _floats(y_pred))))


def mle_bench_rounded_mae(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """predict-volcanic-eruptions' MLE-bench score: the MAE rounded to a whole number (Python's round, halves
    to even), as its grade.py returns int(round(mae))."""
    return float(round(mae(y_true, y_pred)))


CHAMPS_MAE_FLOOR = 1e-9  # Kaggle's floor on each type's MAE, so an exact type scores log(1e-9), not -inf


def mean_group_log_mae(y_true: np.ndarray, y_pred: np.ndarray, groups: np.ndarray,
                       floor: float = CHAMPS_MAE_FLOOR) -> float:
    """CHAMPS' score: log(max(MAE, floor)) within each group (coupling type), averaged over the groups.
    floor=0 gives MLE-bench's number, -inf when a group is predicted exactly."""
    errors = pd.Series(np.abs(np.asarray(y_true, dtype=np.float64) - np.asarray(y_pred, dtype=np.float64)))
    with np.errstate(divide="ignore"):
        return float(np.mean(np.log(np.maximum(errors.groupby(groups).mean().to_numpy(), floor))))

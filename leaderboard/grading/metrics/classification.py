"""Label metrics: exact-match accuracy, F1 (micro, macro), Matthews correlation."""

from __future__ import annotations

import numpy as np
from sklearn import metrics as sk


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def f1_micro(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(sk.f1_score(y_true, y_pred, average="micro"))


def f1_macro(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(sk.f1_score(y_true, y_pred, average="macro"))


def matthews(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(sk.matthews_corrcoef(y_true, y_pred))

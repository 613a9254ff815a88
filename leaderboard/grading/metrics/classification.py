"""Label metrics: exact-match accuracy, top-1 error, F1 (binary, micro, macro), Matthews correlation, and
the probabilistic F1 of scores against binary labels."""

from __future__ import annotations

import numpy as np
from sklearn import metrics as sk

from ..validation import SubmissionError


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


POSITIVE, NEGATIVE = {"1", "1.0", "true"}, {"0", "0.0", "false"}


def f1_binary(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """F1 of the positive class, as Kaggle's "F1 score" of a yes/no target: 1 or True is positive."""
    return float(sk.f1_score(_binary(y_true), _binary(y_pred), zero_division=0))


def _binary(values: np.ndarray) -> np.ndarray:
    out = np.empty(len(values), dtype=np.int8)
    for i, value in enumerate(values):
        text = str(value).strip().lower()
        if text not in POSITIVE and text not in NEGATIVE:
            raise SubmissionError(f"binary F1 scores the labels 1/0 or True/False, not {str(value)[:40]!r}")
        out[i] = text in POSITIVE
    return out


def f1_micro(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(sk.f1_score(y_true, y_pred, average="micro"))


def f1_macro(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(sk.f1_score(y_true, y_pred, average="macro"))


def matthews(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(sk.matthews_corrcoef(y_true, y_pred))


def _first_label(prediction: object) -> int:
    """The first whitespace-separated token as a class id: '12 7 3' -> 12 (Kaggle's top-k format)."""
    tokens = str(prediction).split()
    try:
        return int(tokens[0])
    except (IndexError, ValueError):
        raise SubmissionError(f"prediction {str(prediction)[:40]!r} does not start with an integer class id") from None


def top1_error(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """1 - accuracy of the first predicted class id per row (iNaturalist's top-1 classification error)."""
    truth = np.array([int(str(t)) for t in y_true])
    guess = np.array([_first_label(p) for p in y_pred])
    return float(1.0 - np.mean(truth == guess))


def probabilistic_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """RSNA breast cancer's probabilistic F1 (beta = 1): predictions clipped to [0, 1] count as fractional
    true and false positives; 0 when the probabilistic precision or recall is 0 (or undefined)."""
    labels = np.asarray(y_true, dtype=np.float64) != 0
    p = np.clip(np.asarray(y_pred, dtype=np.float64), 0.0, 1.0)
    true_positive, false_positive = float(p[labels].sum()), float(p[~labels].sum())
    if true_positive == 0 or not labels.any():
        return 0.0
    precision, recall = true_positive / (true_positive + false_positive), true_positive / int(labels.sum())
    return 2 * precision * recall / (precision + recall)

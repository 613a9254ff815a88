"""MAP@k for space-separated ranked predictions: Kaggle's MAP@5 against one true label per row, and
MLE-bench's MAP@k against a set of true labels per row; label-weighted label-ranking average precision."""

from __future__ import annotations

import numpy as np
from sklearn import metrics as sk


def average_precision_at_k(actual: str, predicted: str, k: int) -> float:
    """One relevant item: 1/rank of its first occurrence in the top k, else 0."""
    seen: list[str] = []
    for guess in str(predicted).split():
        if guess in seen:  # a repeated guess neither scores nor uses up a later rank's credit
            continue
        seen.append(guess)
        if len(seen) > k:
            break
        if guess == str(actual):
            return 1.0 / len(seen)
    return 0.0


def map_at_k(y_true: np.ndarray, y_pred: np.ndarray, k: int = 5) -> float:
    return float(np.mean([average_precision_at_k(a, p, k) for a, p in zip(y_true, y_pred, strict=True)]))


def map_at_5(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return map_at_k(y_true, y_pred, 5)


def _average_precision_sets(actual: str, predicted: str, k: int) -> float:
    """MLE-bench's AP@k: the answer is a set of labels, the prediction its first k single-space tokens.

    A repeated guess uses up its rank without scoring again, and tokens are split on single spaces,
    so a double space makes an empty guess that takes a rank too.
    """
    truth, guesses = set(str(actual).split(" ")), str(predicted).split(" ")[:k]
    hits, total = 0, 0.0
    for rank, guess in enumerate(guesses, 1):
        if guess in truth and guess not in guesses[:rank - 1]:
            hits += 1
            total += hits / rank
    return total / min(len(truth), k)


def mle_bench_map_at_5(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean([_average_precision_sets(a, p, 5) for a, p in zip(y_true, y_pred, strict=True)]))


def mle_bench_map_at_12(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean([_average_precision_sets(a, p, 12) for a, p in zip(y_true, y_pred, strict=True)]))


def lwlrap(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Label-weighted LRAP (Freesound 2019): scikit-learn's LRAP with each row weighted by its number of
    true labels; rows without labels are left out (scikit-learn would score them 1)."""
    weights = np.sum(y_true > 0, axis=1)
    labelled = weights > 0
    return float(sk.label_ranking_average_precision_score(y_true[labelled] > 0, y_pred[labelled],
                                                          sample_weight=weights[labelled]))

"""MAP@k for space-separated ranked predictions against one true label per row (Kaggle's MAP@5)."""

from __future__ import annotations

import numpy as np


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

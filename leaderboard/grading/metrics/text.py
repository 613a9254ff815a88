"""Text metrics: word-level Jaccard (Kaggle's, and scikit-learn's per-sample one) and Levenshtein distance."""

from __future__ import annotations

import numpy as np


def jaccard_words(a: str, b: str) -> float:
    """Kaggle's word-set Jaccard on lower-cased text; two empty strings agree fully."""
    left, right = set(str(a).lower().split()), set(str(b).lower().split())
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


def mean_jaccard(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean([jaccard_words(a, b) for a, b in zip(y_true, y_pred, strict=True)]))


def _jaccard_or_zero(a: str, b: str) -> float:
    """scikit-learn's per-sample Jaccard of word sets: an empty union scores 0 (its zero_division)."""
    left, right = set(str(a).lower().split()), set(str(b).lower().split())
    union = left | right
    return len(left & right) / len(union) if union else 0.0


def mean_jaccard_samples(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean([_jaccard_or_zero(a, b) for a, b in zip(y_true, y_pred, strict=True)]))


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute all cost 1), two-row dynamic programme."""
    a, b = str(a), str(b)
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def mean_levenshtein(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean([levenshtein(a, b) for a, b in zip(y_true, y_pred, strict=True)]))

"""Text metrics: word-level Jaccard (Kaggle's, and scikit-learn's per-sample one), Levenshtein distance of
strings, and the gesture error rate (edit distance of id sequences)."""

from __future__ import annotations

import numpy as np

from ..validation import SubmissionError


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


def levenshtein(a: str | list, b: str | list) -> int:
    """Edit distance (insert, delete, substitute all cost 1), two-row dynamic programme; between the
    characters of two strings, or the items of two lists."""
    a, b = (x if isinstance(x, list) else str(x) for x in (a, b))
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def mean_levenshtein(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean([levenshtein(a, b) for a, b in zip(y_true, y_pred, strict=True)]))


def _gestures(sequence: object) -> list[int]:
    try:
        return [int(token) for token in str(sequence).split()]
    except ValueError:
        raise SubmissionError(f"sequence {str(sequence)[:40]!r} is not whole numbers separated by spaces") from None


def gesture_edit_distance(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Multi-modal gesture recognition: the summed edit distance between the gesture-id sequences,
    divided by the number of gestures in the answers (an error rate that can exceed 1)."""
    truths = [[int(token) for token in str(t).split()] for t in y_true]  # answers: never quoted in a message
    guesses = [_gestures(p) for p in y_pred]
    distance = sum(levenshtein(t, g) for t, g in zip(truths, guesses, strict=True))
    return distance / sum(len(t) for t in truths)

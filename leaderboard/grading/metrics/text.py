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
    """Edit distance (insert, delete, substitute all cost 1) between the characters of two strings or the
    items of two lists: Myers' bit-parallel algorithm (Hyyro's formulation), one column of the dynamic
    programme per item of b as a few operations on Python integers, so ~300,000 sentences take seconds."""
    a, b = (x if isinstance(x, list) else str(x) for x in (a, b))
    if not a or not b:
        return len(a) + len(b)
    full, top = (1 << len(a)) - 1, 1 << (len(a) - 1)
    match: dict = {}
    for i, item in enumerate(a):
        match[item] = match.get(item, 0) | (1 << i)
    plus, minus, distance = full, 0, len(a)  # vertical +1 / -1 deltas of the current column
    for item in b:
        eq = match.get(item, 0)
        xv = eq | minus
        xh = ((((eq & plus) + plus) & full) ^ plus) | eq
        h_plus, h_minus = (minus | ~(xh | plus)) & full, plus & xh
        distance += 1 if h_plus & top else -1 if h_minus & top else 0
        h_plus, h_minus = ((h_plus << 1) | 1) & full, (h_minus << 1) & full
        plus, minus = (h_minus | ~(xv | h_plus)) & full, h_plus & xv
    return distance


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

"""MAP@k for space-separated ranked predictions: Kaggle's MAP@5 against one true label per row, and
MLE-bench's MAP@k against a set of true labels per row; label-weighted label-ranking average precision;
Kendall tau of predicted orders (AI4Code's notebook cells)."""

from __future__ import annotations

import numpy as np
from sklearn import metrics as sk

from ..validation import SubmissionError


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


def _inversions(ranks: np.ndarray) -> int:
    """Pairs i < j with ranks[i] > ranks[j]: all pairs at once (notebooks hold tens to hundreds of cells)."""
    return int(np.count_nonzero(np.triu(ranks[:, None] > ranks[None, :], k=1)))


def _cell_ranks(truth: list[str], order: list[str]) -> np.ndarray:
    position = {cell: i for i, cell in enumerate(truth)}
    if len(order) != len(truth) or len(position) != len(truth) or set(order) != position.keys():
        raise SubmissionError(f"a cell_order must list each of the notebook's {len(truth)} cells once; "
                              f"found {len(order)} id(s), {len(set(order))} distinct, not the notebook's cells")
    return np.fromiter((position[cell] for cell in order), dtype=np.int64, count=len(order))


def kendall_tau_orders(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """AI4Code's Kendall tau over cell orders: 1 - 4 x (inversions summed over notebooks) / (sum of
    n (n - 1)), so a long notebook weighs more than a short one."""
    inversions = pairs = 0
    for truth_text, order_text in zip(y_true, y_pred, strict=True):
        truth = str(truth_text).split()
        inversions += _inversions(_cell_ranks(truth, str(order_text).split()))
        pairs += len(truth) * (len(truth) - 1)
    return 1 - 4 * inversions / pairs

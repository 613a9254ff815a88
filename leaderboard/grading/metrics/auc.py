"""ROC AUC through ranks (O(n log n), same value as sklearn), its column-wise mean, and ALASKA2's
weighted AUC, and Jigsaw's bias-weighted AUC as MLE-bench computes it."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from sklearn import metrics as sk


def roc_auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """Binary ROC AUC (Mann-Whitney U); ties in the scores count one half, as in sklearn."""
    positive = np.asarray(y_true) == 1
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("ROC AUC is undefined when the answers hold only one class")
    ranks = rankdata(y_score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def mean_columnwise_roc_auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """Macro average of per-column AUCs (sklearn's average='macro' for multilabel indicators)."""
    y_true, y_score = np.atleast_2d(y_true.T).T, np.atleast_2d(y_score.T).T
    return float(np.mean([roc_auc(y_true[:, k], y_score[:, k]) for k in range(y_true.shape[1])]))


ALASKA_TPR_BOUNDS = (0.0, 0.4, 1.0)
ALASKA_WEIGHTS = (2.0, 1.0)


def _roc_with_tpr_points(y_true: np.ndarray, y_score: np.ndarray, points: tuple[float, ...]):
    """sklearn's ROC curve with a vertex added at each TPR in `points` (FPR linearly interpolated)."""
    fpr, tpr, _ = sk.roc_curve(y_true, y_score, pos_label=1)
    for point in points:
        if point in tpr:
            continue
        i = int(np.searchsorted(tpr, point, side="right"))  # first vertex above the point
        if i == len(tpr):
            continue
        x = fpr[i - 1] + (fpr[i] - fpr[i - 1]) * (point - tpr[i - 1]) / (tpr[i] - tpr[i - 1])
        fpr, tpr = np.insert(fpr, i, x), np.insert(tpr, i, point)
    return fpr, tpr


def weighted_auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """ALASKA2's weighted AUC: the ROC area in TPR bands [0, 0.4] and [0.4, 1], weighted 2 and 1, normalised."""
    fpr, tpr = _roc_with_tpr_points(np.asarray(y_true, np.float64), np.asarray(y_score, np.float64),
                                    ALASKA_TPR_BOUNDS)
    total = 0.0
    for low, high, weight in zip(ALASKA_TPR_BOUNDS[:-1], ALASKA_TPR_BOUNDS[1:], ALASKA_WEIGHTS, strict=True):
        band = (tpr >= low) & (tpr <= high)
        if band.any():  # the band's curve, closed by a horizontal line to FPR 1 at its top
            xs, ys = np.append(fpr[band], 1.0), np.append(tpr[band], high) - low
            total += weight * float(np.trapezoid(ys, xs))
    bands = np.diff(ALASKA_TPR_BOUNDS)
    return total / float(np.dot(bands, ALASKA_WEIGHTS))


def _at_least_half(values: np.ndarray) -> np.ndarray:
    """MLE-bench's `1 if x >= 0.5 else 0`; a missing (empty) value counts 0."""
    numbers = pd.to_numeric(pd.Series(np.ravel(values), dtype=object), errors="coerce").to_numpy(dtype=np.float64)
    return (numbers >= 0.5).astype(int).reshape(np.shape(values))


def _power_mean(scores: list[float], p: int = -5) -> float:
    return float(np.mean(np.power(scores, p)) ** (1 / p))


def jigsaw_bias_auc(toxicity: np.ndarray, prediction: np.ndarray, identities: np.ndarray) -> float:
    """0.25 x overall AUC + 0.25 x the power means of the subgroup, BPSN and BNSP AUCs over identities,
    all on predictions binarised at 0.5 (MLE-bench's departure from Kaggle, which used the raw scores)."""
    y, guess, member = _at_least_half(toxicity), _at_least_half(prediction), _at_least_half(identities) == 1
    bias = [[sk.roc_auc_score(y[rows], guess[rows]) for rows in (
        member[:, k],
        (member[:, k] & (y == 0)) | (~member[:, k] & (y == 1)),  # background positive, subgroup negative
        (member[:, k] & (y == 1)) | (~member[:, k] & (y == 0)),  # background negative, subgroup positive
    )] for k in range(member.shape[1])]
    return 0.25 * float(sk.roc_auc_score(y, guess)) + 0.25 * sum(_power_mean(list(c)) for c in zip(*bias, strict=True))

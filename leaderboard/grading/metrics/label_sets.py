"""Micro-averaged F1 over whitespace-separated label sets (one set per row), as MLE-bench computes it
with scikit-learn's MultiLabelBinarizer: the classes are the labels that occur in the answers, so a
predicted label that never occurs there is ignored rather than counted as a false positive."""

from __future__ import annotations

import numpy as np


def f1_micro_label_sets(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    truths = [set(str(t).split()) for t in y_true]
    classes = set().union(*truths)
    tp = fp = fn = 0
    for truth, prediction in zip(truths, y_pred, strict=True):
        guessed = set(str(prediction).split()) & classes
        tp += len(guessed & truth)
        fp += len(guessed - truth)
        fn += len(truth - guessed)
    denominator = 2 * tp + fp + fn
    return 2 * tp / denominator if denominator else 0.0  # sklearn's zero_division default

"""TensorFlow 2.0 Question Answering: micro F1 of long and short answer predictions, as MLE-bench scores it.

Each row holds one prediction ('start:end' token span, 'YES', 'NO' or empty) and, in the answers, the
row's acceptable answers separated by spaces (empty: the question has no such answer).
"""

from __future__ import annotations

import numpy as np
from sklearn import metrics as sk

from ..validation import SubmissionError

YES_NO = ("YES", "NO")


def _prediction(text: object) -> str:
    """A span's canonical 'start:end' (its tokens as integers), YES, NO or '' (no answer)."""
    text = str(text).strip()
    parts = text.split(":")
    if len(parts) == 2:
        try:
            return f"{int(parts[0])}:{int(parts[1])}"
        except ValueError:
            pass
    elif text in (*YES_NO, ""):
        return text
    raise SubmissionError(f"prediction {text[:40]!r} is not 'start_token:end_token', YES, NO or empty")


def answer_labels(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MLE-bench's binary labels: predicted = the row has an answer; true = that answer is acceptable,
    or, for an empty prediction, an acceptable answer exists."""
    guesses = [_prediction(p) for p in y_pred]
    predicted = np.array([bool(g) for g in guesses])
    acceptable = [str(t).split() for t in y_true]
    true = np.array([g in ok if g else bool(ok) for g, ok in zip(guesses, acceptable, strict=True)])
    return true, predicted


def qa_micro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    true, predicted = answer_labels(y_true, y_pred)
    return float(sk.f1_score(true, predicted, average="micro"))

"""Scores a submission to this research task, as MLAgentBench's eval.py scripts do.

get_score(submission_folder) reads submission_folder/submission.csv and the held-out answers
(answer.csv, beside this file), and returns the task's metric (named below). A missing or malformed
submission raises SubmissionError whose message says what is wrong; nothing of the answers is shown.
Written by Medalboard's make_research_tasks; needs numpy and pandas only.
"""

import math
import os
import sys

import numpy as np
import pandas as pd

TASK = {}  # this task's settings (id and target columns, metric), written in by make_research_tasks
MAX_BYTES = 50 * 1024 * 1024  # a submission for a few hundred rows is kilobytes; more is not a submission
SHOWN = 5  # how many offending ids a message lists


class SubmissionError(ValueError):
    """The submission cannot be scored; the message says why."""


def _read(path: str) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def read_submission(folder: str) -> pd.DataFrame:
    path = os.path.join(folder, "submission.csv")
    if not os.path.isfile(path):
        raise SubmissionError(f"no submission.csv in {folder!r}: the task's script must write it there")
    if os.path.getsize(path) > MAX_BYTES:
        raise SubmissionError(f"submission.csv is over {MAX_BYTES // 2**20} MiB")
    try:
        frame = _read(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise SubmissionError(f"submission.csv is not a readable CSV file: {exc}") from None
    missing = [c for c in (TASK["id"], TASK["target"]) if c not in frame.columns]
    if missing:
        raise SubmissionError(f"submission.csv lacks the column(s) {missing}; it has {list(frame.columns)[:10]}")
    return frame


def _listed(values) -> str:
    values = sorted(values)
    return ", ".join(map(repr, values[:SHOWN])) + (f" ... ({len(values)} in all)" if len(values) > SHOWN else "")


def aligned(submission: pd.DataFrame, answers: pd.DataFrame) -> pd.Series:
    """The submission's predictions in the answers' row order, after checking its ids."""
    ids = submission[TASK["id"]].str.strip()
    repeated = set(ids[ids.duplicated()])
    if repeated:
        raise SubmissionError(f"ids repeated in submission.csv: {_listed(repeated)}")
    expected = set(answers[TASK["id"]])
    if set(ids) - expected:
        raise SubmissionError(f"ids that are not in the test set: {_listed(set(ids) - expected)}")
    if expected - set(ids):
        raise SubmissionError(f"{len(expected - set(ids))} test ids have no prediction, e.g. "
                              f"{_listed(expected - set(ids))}")
    predictions = pd.Series(submission[TASK["target"]].str.strip().to_numpy(), index=ids.to_numpy())
    predictions = predictions.reindex(answers[TASK["id"]].to_numpy())
    if (predictions == "").any():
        raise SubmissionError(f"empty predictions for the ids {_listed(predictions.index[predictions == ''])}")
    return predictions


def numbers(predictions: pd.Series) -> np.ndarray:
    values = pd.to_numeric(predictions, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        raise SubmissionError(f"predictions that are not finite numbers for the ids {_listed(predictions.index[bad])}")
    return values


def accuracy(truth: pd.Series, predictions: pd.Series) -> float:
    return float(np.mean(truth.to_numpy() == predictions.to_numpy()))


def mean_absolute_error(truth: pd.Series, predictions: pd.Series) -> float:
    return float(np.mean(np.abs(numbers(truth) - numbers(predictions))))


def roc_auc(truth: pd.Series, predictions: pd.Series) -> float:
    """The probability that a random positive is ranked above a random negative (ties count one half)."""
    positive = numbers(truth) == 1
    ranks = pd.Series(numbers(predictions)).rank(method="average").to_numpy()
    n_positive, n_negative = int(positive.sum()), int((~positive).sum())
    return float((ranks[positive].sum() - n_positive * (n_positive + 1) / 2) / (n_positive * n_negative))


METRICS = {"accuracy": accuracy, "mean_absolute_error": mean_absolute_error, "roc_auc": roc_auc}


def get_score(submission_folder: str = "../env") -> float:
    answers = _read(os.path.join(os.path.dirname(os.path.abspath(__file__)), "answer.csv"))
    predictions = aligned(read_submission(submission_folder), answers)
    score = METRICS[TASK["metric"]](answers[TASK["target"]], predictions)
    if not math.isfinite(score):
        raise SubmissionError("the score is not a finite number")
    return score


if __name__ == "__main__":
    print(get_score(*sys.argv[1:2]))

"""Where MLE-bench's own grade.py gives a number we do not: the number it would print, for the report's notes.

This grader keeps the sensible result (rows matched by id, a floored log, a repeated id rejected), and
each function here computes what MLE-bench would have printed for the same files, so a report says both.
A function returns None when MLE-bench would agree with the score.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import pandas_values
from .metrics import detection, regression
from .spec_types import SCORED, GraderSpec


@dataclass(frozen=True)
class Graded:
    """One scored submission: the files as read (file order), the aligned values scored, and the score."""

    spec: GraderSpec
    score: float
    sub: pd.DataFrame
    ans: pd.DataFrame
    take: Callable  # take(frame, is_submission=False): the frame's target values in file order
    y_true: np.ndarray
    y_pred: np.ndarray
    context: np.ndarray | None = None


def _printed(value: float) -> str:
    return str(round(float(value), 5))


def _stanford_covid(graded: Graded) -> str | None:
    """grade.py sorts both files by id_seqpos but indexes the sorted submission with the answers' keep mask,
    which pandas aligns by row label, i.e. by each file's original row position: a submission in another
    row order than the answers is scored on the wrong rows."""
    spec, sub, ans = graded.spec, graded.sub, graded.ans
    keep = ans[SCORED].to_numpy(dtype=bool)
    sub_sorted = np.argsort(sub[spec.id_column].to_numpy(dtype=object), kind="stable")
    ans_sorted = np.argsort(ans[spec.id_column].to_numpy(dtype=object), kind="stable")
    sub_rows, ans_rows = sub_sorted[keep[sub_sorted]], ans_sorted[keep[ans_sorted]]
    theirs = regression.mean_columnwise_rmse(graded.take(ans)[ans_rows], graded.take(sub, True)[sub_rows])
    if round(theirs, 5) == round(graded.score, 5):
        return None
    return (f"MLE-bench would print {_printed(theirs)}: its grade.py applies the answers' keep mask to the sorted "
            "submission by row position in the file, not by id_seqpos, so for rows in another order than the "
            "answers it scores the wrong rows. This score matches rows by id_seqpos.")


def _champs(graded: Graded) -> str | None:
    if not np.any(graded.y_true == graded.y_pred):  # a type can only have MAE 0 if its rows are exact
        return None
    theirs = regression.mean_group_log_mae(graded.y_true, graded.y_pred, graded.context, floor=0.0)
    if np.isfinite(theirs):
        return None
    return ("MLE-bench would print -inf: at least one coupling type is predicted exactly, and its log(MAE) of 0 "
            "is -inf. This score floors each type's MAE at 1e-9, as Kaggle did (log 1e-9 = -20.72), so a perfect "
            "submission is scored and earns its medal.")


def _tweet(graded: Graded) -> str | None:
    both = sum(1 for t, p in zip(graded.y_true, graded.y_pred, strict=True) if not str(p).split()
               and not str(t).split())
    if not both:
        return None
    return (f"MLE-bench would call this submission invalid: in {both} row(s) both the answer and the prediction "
            "are empty, and its Jaccard divides by zero there. This score counts those rows as 1.")


def _as_text_by_pandas(graded: Graded) -> str | None:
    """MAP@k graders take astype(str) of the column pandas typed: a column of single ids becomes integers
    (zero padding lost) or, with one empty cell, floats ('123.0'), which then match nothing."""
    column = graded.spec.target_columns[0]
    kinds = (pandas_values.kind(graded.sub[column].to_numpy(dtype=object)),
             pandas_values.kind(graded.ans[column].to_numpy(dtype=object)))
    if kinds == ("text", "text"):
        return None
    theirs = graded.spec.metric_info.fn(_as_pandas_text(graded.ans[column], graded.y_true),
                                        _as_pandas_text(graded.sub[column], graded.y_pred))
    if round(theirs, 5) == round(graded.score, 5):
        return None
    return (f"MLE-bench would print {_printed(theirs)}: pandas reads the {column!r} column as numbers, and its "
            "grade.py compares their text ('123.0' for 123 in a column with an empty cell, '12' for '0012'). "
            "This score compares the text as written.")


def _as_pandas_text(column: pd.Series, values: np.ndarray) -> np.ndarray:
    """`values` (cells of `column`, aligned) as astype(str) gives them once pandas has typed the whole column."""
    raw = column.to_numpy(dtype=object)
    as_text = dict(zip(raw, pandas_values.as_pandas_text(raw), strict=True))
    return np.array([as_text[v] for v in values], dtype=object)


def _split_by_pandas(graded: Graded) -> str | None:
    """Label-set graders call .str.split() on the column pandas read: numbers (one id per row) make it fail."""
    column = graded.spec.target_columns[0]
    if pandas_values.kind(graded.sub[column].to_numpy(dtype=object)) == "text":
        return None
    return (f"MLE-bench would call this submission invalid: pandas reads its {column!r} column as numbers (one "
            "label per row), and grade.py's .str.split() fails on numbers. This score reads the labels as text.")


def _vinbigdata(graded: Graded) -> str | None:
    """MLE-bench numbers the file's first prediction 0, and COCOeval records a match on the true box by the
    detection's id, so the box that detection 0 takes stays free for another detection."""
    ids = graded.ans[graded.spec.id_column].astype(str).to_numpy()
    first = np.flatnonzero(ids == str(graded.sub[graded.spec.id_column].iloc[0]))
    if not len(first):
        return None
    theirs = detection.coco_map(graded.y_true, graded.y_pred, first_row=int(first[0]))
    if round(theirs, 5) == round(graded.score, 5):
        return None
    return (f"MLE-bench would print {_printed(theirs)}: it numbers the file's first prediction 0, and COCO's "
            "matching then leaves the true box that prediction found free for a second prediction. This score "
            "lets each true box be found once.")


AFTER_SCORING: dict[str, Callable[[Graded], str | None]] = {
    "vinbigdata-chest-xray-abnormalities-detection": _vinbigdata,
    "stanford-covid-vaccine": _stanford_covid,
    "champs-scalar-coupling": _champs,
    "tweet-sentiment-extraction": _tweet,
    "whale-categorization-playground": _as_text_by_pandas,
    "hotel-id-2021-fgvc8": _as_text_by_pandas,
    "h-and-m-personalized-fashion-recommendations": _as_text_by_pandas,
    "imet-2020-fgvc7": _split_by_pandas,
    "plant-pathology-2021-fgvc8": _split_by_pandas,
    "facebook-recruiting-iii-keyword-extraction": _split_by_pandas,
}


def notes_for(graded: Graded) -> list[str]:
    check = AFTER_SCORING.get(graded.spec.competition_id)
    note = check(graded) if check else None
    return [note] if note else []


UNDEFINED_SCORE_NOTE = ("MLE-bench would print nan here and count the submission as valid (with no medal); this "
                        "grader reports the metric as undefined instead.")

# grade.py merges the submission into the answers on the id after comparing only the id sets: a repeated id
# is scored once per repeat. The metric MLE-bench applies to the merged rows (answers, submission, context).
MERGED: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray | None], float]] = {
    "champs-scalar-coupling": lambda t, p, c: regression.mean_group_log_mae(t, p, c, floor=0.0),
    "predict-volcanic-eruptions-ingv-oe": lambda t, p, c: regression.mle_bench_rounded_mae(t, p),
}


def when_rejected(spec: GraderSpec, sub: pd.DataFrame, ans: pd.DataFrame, take: Callable) -> list[str]:
    """A file rejected here for repeated ids that MLE-bench would score anyway: the number it would print."""
    score = MERGED.get(spec.competition_id)
    sub_ids = pandas_values.typed(sub[spec.id_column].to_numpy(dtype=object))
    ans_ids = pandas_values.typed(ans[spec.id_column].to_numpy(dtype=object))
    if score is None or len(set(sub_ids)) == len(sub_ids) or set(sub_ids) != set(ans_ids):
        return []
    pairs = pd.DataFrame({"id": ans_ids, "i": np.arange(len(ans_ids))}).merge(
        pd.DataFrame({"id": sub_ids, "j": np.arange(len(sub_ids))}), on="id")
    rows = pairs["i"].to_numpy()
    context = ans[list(spec.context_columns)].to_numpy(dtype=object)[rows, 0] if spec.context_columns else None
    theirs = score(take(ans)[rows], take(sub, True)[pairs["j"].to_numpy()], context)
    return [f"MLE-bench would score this file anyway and print {_printed(theirs)}: it merges the submission into "
            f"the answers on {spec.id_column!r}, so each repeated row is scored once more."]

"""Row alignment: pair each answers row with the submission row MLE-bench would score it against.

For unique ids, MLE-bench's "sort both by id, then require equal ids" pairs exactly the rows that an
id join pairs, so a hash join (or nothing, when the files already share an order) gives the same
numbers without sorting a million strings.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import pandas_values, validation
from .spec_types import Align, GraderSpec


@dataclass
class Aligned:
    y_true: np.ndarray
    y_pred: np.ndarray
    notes: list[str] = field(default_factory=list)
    answers_order: np.ndarray | None = None  # the answers row behind each y_true row; None: the answers' order


def _ids(frame: pd.DataFrame, spec: GraderSpec) -> np.ndarray:
    return frame[spec.id_column].to_numpy(dtype=object)


def order_by_id(sub_ids: np.ndarray, ans_ids: np.ndarray, id_column: str,
                index: pd.Index | None = None) -> np.ndarray | None:
    """Submission row for each answers row, after checking the ids match; None = already aligned.

    `index` is the answers' ids as an Index, when the caller keeps one (its hash table is reused)."""
    if len(sub_ids) == len(ans_ids) and np.array_equal(sub_ids, ans_ids):
        return None
    if index is None:
        index = pd.Index(ans_ids, dtype=ans_ids.dtype)  # object for text; int64 or float64 for typed ids
    positions = index.get_indexer(sub_ids)  # one hash table, of the (unique) answer ids
    validation.check_matched_ids(positions, sub_ids, ans_ids, id_column)
    order = np.empty(len(ans_ids), dtype=np.intp)
    order[positions] = np.arange(len(positions))
    return order


def _sorted_multiset(sub_ids: np.ndarray, ans_ids: np.ndarray, id_column: str) -> tuple[np.ndarray, np.ndarray]:
    """Repeated ids (comment texts): both sorted stably by id, ids must then agree row by row."""
    validation.check_same_ids(pd.Index(sub_ids).unique(), pd.Index(ans_ids).unique(), id_column)
    validation.check_row_count(len(sub_ids), len(ans_ids))
    sub_order, ans_order = np.argsort(sub_ids, kind="stable"), np.argsort(ans_ids, kind="stable")
    differs = sub_ids[sub_order] != ans_ids[ans_order]
    if differs.any():
        counts = pd.Series(sub_ids).value_counts().sub(pd.Series(ans_ids).value_counts(), fill_value=0)
        wrong = counts[counts != 0].index.tolist()
        raise validation.SubmissionError(f"{len(wrong)} {id_column!r} value(s) appear a different number of "
                                         f"times than in the test set: {validation.sample(wrong)}")
    return sub_order, ans_order


SAMPLE = 32  # submission ids looked up first: when none is in the answers as text, try pandas' typing first


def by_id(spec: GraderSpec, sub: pd.DataFrame, ans: pd.DataFrame, take: Callable) -> Aligned:
    """Ids matched as text; when that fails, as pandas types them ('12' is '00012' when both read as
    integers). Typing first when not one of the first ids matches as text: a whole file spelled apart."""
    index = ans.index if ans.index.dtype == object else None  # the answers reader indexes by id
    ids = (_ids(sub, spec), _ids(ans, spec))
    as_text = functools.partial(_by_id, spec, sub, ans, take, ids, index)
    as_typed = functools.partial(_by_typed_id, spec, sub, ans, take)
    spelled_apart = index is not None and (index.get_indexer(ids[0][:SAMPLE]) < 0).all()
    errors = {}
    for name, attempt in ((("typed", as_typed), ("text", as_text)) if spelled_apart else
                          (("text", as_text), ("typed", as_typed))):
        try:
            return attempt()
        except validation.SubmissionError as exc:
            errors[name] = exc
    raise errors["text"]  # the text comparison's error names the ids as the submission spells them


def _by_id(spec: GraderSpec, sub: pd.DataFrame, ans: pd.DataFrame, take: Callable,
           ids: tuple[np.ndarray, np.ndarray], index: pd.Index | None) -> Aligned:
    sub_ids, ans_ids = ids
    if not spec.unique_ids:
        sub_order, ans_order = _sorted_multiset(sub_ids, ans_ids, spec.id_column)
        return Aligned(take(ans)[ans_order], take(sub, True)[sub_order], answers_order=ans_order)
    if spec.extra_ids_ignored:
        known = (index if index is not None else pd.Index(ans_ids, dtype=ans_ids.dtype)).get_indexer(sub_ids) >= 0
        sub, sub_ids = (sub, sub_ids) if known.all() else (sub[known], sub_ids[known])
    order = order_by_id(sub_ids, ans_ids, spec.id_column, index)
    if spec.rows_in_answers_order:
        validation.check_same_order(sub_ids, ans_ids, spec.id_column)
    y_pred = take(sub, True)
    return Aligned(take(ans), y_pred if order is None else y_pred[order])


def _by_typed_id(spec: GraderSpec, sub: pd.DataFrame, ans: pd.DataFrame, take: Callable) -> Aligned:
    typed_ids, typed_answers = pandas_values.typed(_ids(sub, spec)), pandas_values.typed(_ids(ans, spec))
    if typed_ids.dtype == object and typed_answers.dtype == object:  # text to pandas too: nothing new to try
        raise validation.SubmissionError("the ids are text to pandas as well")
    aligned = _by_id(spec, sub, ans, take, (typed_ids, typed_answers), None)
    aligned.notes.append(f"the {spec.id_column!r} values are not spelled as in the answers, but pandas reads both "
                         f"columns as the same {pandas_values.type_name(typed_ids)} values (as MLE-bench does), so "
                         "they were matched")
    return aligned


def positional(spec: GraderSpec, sub: pd.DataFrame, ans: pd.DataFrame, take: Callable) -> Aligned:
    validation.check_row_count(len(sub), len(ans))
    aligned = Aligned(take(ans), take(sub, True))
    sub_ids, ans_ids = _ids(sub, spec), _ids(ans, spec)
    if not np.array_equal(sub_ids, ans_ids):
        aligned.notes.append(_positional_note(spec, sub_ids, ans_ids, aligned, take(sub, True)))
    return aligned


def _positional_note(spec, sub_ids, ans_ids, aligned: Aligned, y_pred: np.ndarray) -> str:
    note = (f"the submission's {spec.id_column!r} values are not in the answers' order; MLE-bench scores rows "
            "by position as given, and so does this score")
    if not spec.unique_ids:
        return note  # repeated ids (one row per class): no id-matched score to compare with
    try:
        order = order_by_id(sub_ids, ans_ids, spec.id_column)
    except validation.SubmissionError as exc:
        return f"{note}; an id-aligned grader would reject the file: {exc}"
    matched = spec.metric_info.fn(aligned.y_true, y_pred if order is None else y_pred[order])
    return f"{note}; matched by id the score would be {round(matched, 5)}"


def _sort_order(ids: np.ndarray) -> np.ndarray:
    """The order pandas' sort_values gives the column as read_csv types it: numeric ids sort as numbers."""
    numbers = pd.to_numeric(pd.Series(ids, dtype=object), errors="coerce")
    if not numbers.isna().any():
        return np.argsort(numbers.to_numpy(dtype=np.float64), kind="stable")
    return np.argsort(ids, kind="stable")


def sort_unchecked(spec: GraderSpec, sub: pd.DataFrame, ans: pd.DataFrame, take: Callable) -> Aligned:
    validation.check_row_count(len(sub), len(ans))  # unequal lengths make MLE-bench's metric fail
    try:
        return by_id(spec, sub, ans, take)
    except validation.SubmissionError as exc:
        sub_order, ans_order = _sort_order(_ids(sub, spec)), _sort_order(_ids(ans, spec))
        note = (f"the ids do not match the answers ({exc}); MLE-bench sorts both files by "
                f"{spec.id_column!r} and compares by position without checking them, and so does this score; "
                "a grader that checks ids would reject this submission")
        return Aligned(take(ans)[ans_order], take(sub, True)[sub_order], [note])


ALIGNERS = {Align.ID: by_id, Align.POSITIONAL: positional, Align.SORT_UNCHECKED: sort_unchecked}


def align(spec: GraderSpec, sub: pd.DataFrame, ans: pd.DataFrame, take: Callable) -> Aligned:
    """`take(frame, is_submission=False)` returns the frame's value array for the metric."""
    return ALIGNERS[spec.alignment](spec, sub, ans, take)

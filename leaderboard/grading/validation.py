"""Submission checks. Each raises SubmissionError with a message that says exactly what is wrong
and shows the first few offending rows or ids, so an agent (or its author) can fix the file.

Rows are numbered from 1 = the first data row after the header.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

SHOW = 5  # offending rows/ids quoted per message


class SubmissionError(Exception):
    """The submission is invalid; the message is safe to show (it never quotes answer values)."""

    notes: tuple[str, ...] = ()  # e.g. the number MLE-bench would print for this file (divergences.when_rejected)


def from_answers(parse: Callable, *args, **kwargs):
    """Parse an answers value with a submission parser: a failure there is the operator's problem, and the
    parser's message would quote the answers, so it becomes an internal error without the detail."""
    try:
        return parse(*args, **kwargs)
    except SubmissionError:
        raise ValueError("the answers hold a value the grader cannot read") from None


def sample(items: Sequence, total: int | None = None) -> str:
    total = len(items) if total is None else total
    shown = ", ".join(repr(item) if isinstance(item, str) else str(item) for item in list(items)[:SHOW])
    return shown + (f" and {total - SHOW} more" if total > SHOW else "")


def _rows(mask: np.ndarray) -> tuple[str, int]:
    where = np.flatnonzero(mask)
    return sample([int(i) + 1 for i in where[:SHOW]], len(where)), len(where)


def check_header(header: list[str], required: Iterable[str], exact: bool, id_column: str) -> None:
    duplicated = sorted({name for name in header if header.count(name) > 1})
    if duplicated:
        raise SubmissionError(f"duplicate column name(s) in the header: {sample(duplicated)}")
    required = list(required)
    missing = [name for name in (id_column, *required) if name not in header]
    if missing:
        raise SubmissionError(f"missing column(s) {sample(missing)}{_near_misses(missing, header)}; "
                              f"expected columns: {sample([id_column, *required][:8], len(required) + 1)}; "
                              f"the file's columns: {sample(header[:8], len(header)) if header else 'none'}")
    extra = [name for name in header if name not in required and name != id_column]
    if exact and extra:
        raise SubmissionError(f"unexpected column(s) {sample(extra)}: this competition accepts only "
                              f"{id_column!r} and its {len(required)} prediction column(s)")


def check_column_order(header: list[str], expected: list[str]) -> None:
    """The right columns in the wrong order: name the first position that differs."""
    for position, (found, wanted) in enumerate(zip(header, expected, strict=True), 1):
        if found != wanted:
            raise SubmissionError(f"columns are out of order: column {position} is {found!r}, expected {wanted!r}; "
                                  f"this competition needs {expected[0]!r} first, then the classes in the sample "
                                  "submission's order")


def _near_misses(missing: list[str], header: list[str]) -> str:
    """Point at columns that differ only in case or surrounding spaces, the usual slip."""
    folded = {name.strip().lower(): name for name in header}
    hints = [f"{folded[m.strip().lower()]!r} for {m!r}" for m in missing if m.strip().lower() in folded]
    return f" (found {', '.join(hints[:SHOW])}: names are case- and space-sensitive)" if hints else ""


def check_known_labels(sub: pd.DataFrame, targets: Sequence[str], classes: frozenset[str]) -> None:
    """Every prediction is one of the classes the public training data uses: a label outside them
    (cultivar_9 of three cultivars) is a broken file, not a silently wrong row."""
    for column in targets:
        values = sub[column].to_numpy(dtype=object)
        unknown = ~np.isin(values.astype(str), list(classes))
        if unknown.any():
            rows, count = _rows(unknown)
            labels = sorted({str(v) for v in values[unknown]})
            raise SubmissionError(f"{count} value(s) of {column!r} are not among the {len(classes)} classes of the "
                                  f"training data ({sample(sorted(classes))}): {sample(labels)} in rows {rows}")


def check_not_empty(n_rows: int) -> None:
    if n_rows == 0:
        raise SubmissionError("the submission has a header but no data rows")


def check_row_count(n_submission: int, n_answers: int) -> None:
    if n_submission != n_answers:
        raise SubmissionError(f"wrong number of rows: the submission has {n_submission}, expected {n_answers}")


def check_id_values(ids: np.ndarray, id_column: str) -> None:
    blank = pd.isna(ids) | (ids == "")
    if blank.any():
        rows, count = _rows(blank)
        raise SubmissionError(f"{count} row(s) have an empty {id_column!r}: rows {rows}")


def check_matched_ids(positions: np.ndarray, sub_ids: np.ndarray, ans_ids: np.ndarray, id_column: str) -> None:
    """`positions`: the answers row of each submission row (-1: unknown id), from one hash lookup.

    Duplicates first, then unknown ids (the likelier mistake, e.g. a validation split), then missing.
    """
    counts = np.bincount(positions[positions >= 0], minlength=len(ans_ids))
    if (counts > 1).any():
        duplicated = ans_ids[counts > 1]
        raise SubmissionError(f"duplicate {id_column!r} value(s): {sample(list(duplicated[:SHOW]), len(duplicated))}")
    _unmatched(sub_ids[positions < 0], f"{{n}} {id_column!r} value(s) are not in the test set: ")
    _unmatched(ans_ids[counts == 0], f"{{n}} {id_column!r} value(s) of the test set are missing: ")


def _unmatched(ids: np.ndarray, message: str) -> None:
    if len(ids):
        raise SubmissionError(message.format(n=len(ids)) + sample(list(ids[:SHOW]), len(ids)))


def check_same_order(submission_ids: np.ndarray, answer_ids: np.ndarray, id_column: str) -> None:
    """The same ids, which must also come in the test set's order (graders that pair rows by position)."""
    differs = np.flatnonzero(submission_ids != answer_ids)
    if not len(differs):
        return
    first = int(differs[0])
    raise SubmissionError(f"rows are not in the test set's order: row {first + 1} has {id_column!r} "
                          f"{submission_ids[first]!r}, expected {answer_ids[first]!r} (keep the sample submission's "
                          "row order)")


def check_same_ids(submission_ids: pd.Index, answer_ids: pd.Index, id_column: str) -> None:
    """Set comparison for files whose ids may repeat (matched by sorting, not by lookup)."""
    _unmatched(submission_ids.difference(answer_ids, sort=False).to_numpy(),
               f"{{n}} {id_column!r} value(s) are not in the test set: ")
    _unmatched(answer_ids.difference(submission_ids, sort=False).to_numpy(),
               f"{{n}} {id_column!r} value(s) of the test set are missing: ")


def check_no_missing_values(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    for column in columns:
        empty = frame[column].isna().to_numpy()
        if empty.any():
            rows, count = _rows(empty)
            raise SubmissionError(f"column {column!r} has {count} empty or NaN value(s): rows {rows}")


def check_no_missing_text(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    """Text cells that pandas would read as missing ('', 'NA', 'null', ...), for graders that cannot score them."""
    for column in columns:
        empty = frame[column].isin(NA_STRINGS).to_numpy()
        if empty.any():
            rows, count = _rows(empty)
            raise SubmissionError(f"column {column!r} has {count} empty or missing (NA, null, ...) value(s): "
                                  f"rows {rows}")


def check_numbers(frame: pd.DataFrame, columns: Sequence[str], kind: str) -> None:
    """Finite numbers, then the range the kind demands (probability, non-negative, integer)."""
    check_no_missing_values(frame, columns)
    for column in columns:
        values = frame[column].to_numpy(dtype=np.float64)
        _reject(values, ~np.isfinite(values), column, "infinite value(s)")
        if kind == "probability":
            _reject(values, (values < 0) | (values > 1), column, "value(s) outside [0, 1]; expected probabilities")
        elif kind == "non-negative":
            _reject(values, values < 0, column, "negative value(s); the metric takes log(1 + x)")
        elif kind == "integer":
            _reject(values, values != np.round(values), column, "non-integer value(s); expected whole numbers")


def check_range(frame: pd.DataFrame, columns: Sequence[str], low: float, high: float) -> None:
    """MLE-bench's range checks (e.g. petfinder's Pawpularity in [1, 100]): a value outside makes the file invalid."""
    for column in columns:
        values = frame[column].to_numpy(dtype=np.float64)
        _reject(values, (values < low) | (values > high), column,
                f"value(s) outside [{low:g}, {high:g}], the range this competition accepts")


def _reject(values: np.ndarray, bad: np.ndarray, column: str, what: str) -> None:
    if bad.any():
        where = np.flatnonzero(bad)[:SHOW]
        shown = ", ".join(f"row {i + 1}: {float(values[i])!r}" for i in where)
        more = f" and {int(bad.sum()) - len(where)} more" if bad.sum() > len(where) else ""
        raise SubmissionError(f"column {column!r} has {int(bad.sum())} {what} ({shown}{more})")


def check_rows_sum_to_one(values: np.ndarray, atol: float = 1e-6, decimals: int | None = None) -> None:
    """np.isclose within `atol`; or, with `decimals`, the sum rounded to that many decimals must be 1."""
    sums = values.sum(axis=1)
    bad = np.round(sums, decimals) != 1.0 if decimals is not None else ~np.isclose(sums, 1.0, atol=atol)
    if bad.any():
        where = np.flatnonzero(bad)[:SHOW]
        shown = ", ".join(f"row {i + 1} sums to {sums[i]:.6g}" for i in where)
        more = f" and {int(bad.sum()) - len(where)} more" if bad.sum() > len(where) else ""
        raise SubmissionError(f"{int(bad.sum())} row(s) of probabilities do not sum to 1 ({shown}{more})")


def diagnose_non_numeric(text: pd.DataFrame, columns: Sequence[str]) -> None:
    """Called when the typed read failed: find the cells that are not numbers and say which."""
    for column in columns:
        raw = text[column].astype(str).str.strip()
        numbers = pd.to_numeric(raw.where(raw != "", "nan"), errors="coerce")
        bad = (numbers.isna() & ~raw.str.lower().isin(NA_STRINGS_LOWER)).to_numpy()
        if bad.any():
            where = np.flatnonzero(bad)[:SHOW]
            shown = ", ".join(f"row {i + 1}: {raw.iloc[i][:40]!r}" for i in where)
            more = f" and {int(bad.sum()) - len(where)} more" if bad.sum() > len(where) else ""
            raise SubmissionError(f"column {column!r} has {int(bad.sum())} non-numeric value(s) ({shown}{more})")


# pandas' default NA spellings: they read as NaN, and are then reported as "empty or NaN".
NA_STRINGS = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
              "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]
NA_STRINGS_LOWER = {s.lower() for s in NA_STRINGS}

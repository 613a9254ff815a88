"""Values typed the way pandas' read_csv types a column, so that they compare as they do in MLE-bench.

MLE-bench reads both files with a plain pandas.read_csv, and its graders compare what pandas made of
each column: a column whose every cell is an integer ("00012", " 7", "+3") holds ints, one of numbers
holds floats (so "12.0" equals "12"), one of true/false spellings holds bools (and True == 1), and
anything else holds text compared exactly. Typing is per file and per column, as pandas infers it:
"12" in a column that also holds "abc" stays the text "12". Cells pandas reads as missing become NaN.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .validation import NA_STRINGS

TRUE_SPELLINGS = ("True", "TRUE", "true")
FALSE_SPELLINGS = ("False", "FALSE", "false")
INTEGER = r"\s*[+-]?\d+\s*"
FLOAT = (r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
         r"|inf|Inf|INF|infinity|Infinity|INFINITY)\s*")


def typed(values: np.ndarray) -> np.ndarray:
    """One column of raw CSV cells as pandas types it: an int64, float64 or bool array, or objects (text, or
    booleans with NaN); with missing cells, integers become float64 with NaN, as in pandas."""
    cells = pd.Series(np.asarray(values, dtype=object), dtype=object)
    missing = cells.isin(NA_STRINGS).to_numpy()
    present = cells[~missing].astype(str) if missing.any() else cells.astype(str)
    values = _convert(present, _kind(present))
    if not missing.any():
        return values
    out = np.full(len(cells), np.nan, dtype=np.float64 if values.dtype.kind in "iuf" else object)
    out[~missing] = values
    return out


def kind(values: np.ndarray) -> str:
    """'bool', 'int', 'float' or 'text': what pandas makes of the column's present cells."""
    first = str(values[0]) if len(values) else ""
    if first not in NA_STRINGS and _is_text(first):  # O(1) for the usual text column
        return "text"
    cells = pd.Series(np.asarray(values, dtype=object), dtype=object)
    return _kind(cells[~cells.isin(NA_STRINGS)].astype(str))


def type_name(values: np.ndarray) -> str:
    """What typed() made of a column, in words: 'int', 'float', 'bool' or 'text'."""
    return {"i": "int", "u": "int", "f": "float", "b": "bool"}.get(values.dtype.kind, "text")


def _kind(cells: pd.Series) -> str:
    if cells.empty or _is_text(cells.iloc[0]):  # one text cell makes the column text: no pass over the rest
        return "text"
    bools = (*TRUE_SPELLINGS, *FALSE_SPELLINGS)
    if cells.iloc[0] in bools and cells.isin(bools).all():
        return "bool"
    if (cells.str.isdigit() & cells.str.isascii()).all() or cells.str.fullmatch(INTEGER).all():
        return "int"
    return "float" if cells.str.fullmatch(FLOAT).all() else "text"


def _is_text(cell: str) -> bool:
    return cell not in (*TRUE_SPELLINGS, *FALSE_SPELLINGS) and not re.fullmatch(FLOAT, cell)


def as_pandas_text(values: np.ndarray) -> np.ndarray:
    """What MLE-bench's astype(str) makes of a column pandas typed: '123.0' for a float column (one that
    had a missing cell), '12' for '0012' in an integer one, 'True' for 'true', 'nan' where missing."""
    column = typed(values)
    if column.dtype == object and all(isinstance(v, str) for v in column[:1]):
        return np.where(pd.isna(column), "nan", column).astype(object)
    return np.array([str(v) for v in column.tolist()], dtype=object)


def _convert(cells: pd.Series, found: str) -> np.ndarray:
    raw = cells.to_numpy(dtype=object)
    if found == "bool":
        return cells.isin(TRUE_SPELLINGS).to_numpy(dtype=bool)
    if found == "int":
        try:
            return raw.astype(np.int64)  # int() per cell; the pattern above already excluded what pandas refuses
        except OverflowError:
            return np.array([int(cell) for cell in raw], dtype=object)
    if found == "float":
        return raw.astype(np.float64)
    return raw


def comparable(answers: np.ndarray, submission: np.ndarray) -> tuple[np.ndarray, np.ndarray, str | None]:
    """Two aligned label columns as they compare: typed when pandas types both as bools or numbers, else
    their text (where pandas would compare text with bools or numbers, i.e. call every row wrong), with a note."""
    theirs, ours = kind(answers), kind(submission)
    if "text" not in (theirs, ours):
        return typed(answers), typed(submission), None
    if theirs == ours:
        return answers, submission, None
    return answers, submission, (f"pandas reads the submission's labels as {ours} but the answers' as {theirs}, so "
                                 "MLE-bench would find no row equal; this grader compares their text instead")

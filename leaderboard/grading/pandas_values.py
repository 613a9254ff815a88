"""Values typed the way pandas' read_csv types a column, so that they compare as they do in MLE-bench.

MLE-bench reads both files with a plain pandas.read_csv, and its graders compare what pandas made of
each column: a column whose every cell is an integer ("00012", " 7", "+3") holds ints, one of numbers
holds floats (so "12.0" equals "12"), one of true/false spellings holds bools (and True == 1), and
anything else holds text compared exactly. Typing is per file and per column, as pandas infers it:
"12" in a column that also holds "abc" stays the text "12". Cells pandas reads as missing become NaN.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .validation import NA_STRINGS

TRUE_SPELLINGS = ("True", "TRUE", "true")
FALSE_SPELLINGS = ("False", "FALSE", "false")
INTEGER = r"\s*[+-]?\d+\s*"
FLOAT = (r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
         r"|inf|Inf|INF|infinity|Infinity|INFINITY)\s*")


def typed(values: np.ndarray) -> np.ndarray:
    """Python values (bool, int, float or str; NaN where missing) for one column of raw CSV cells."""
    cells = pd.Series(np.asarray(values, dtype=object), dtype=object)
    missing = cells.isin(NA_STRINGS).to_numpy()
    out = np.full(len(cells), np.nan, dtype=object)
    out[~missing] = _typed_present(cells[~missing])
    return out


def kind(values: np.ndarray) -> str:
    """'bool', 'int', 'float' or 'text': what pandas makes of the column's present cells."""
    cells = pd.Series(np.asarray(values, dtype=object), dtype=object)
    return _kind(cells[~cells.isin(NA_STRINGS)].astype(str))


def _kind(cells: pd.Series) -> str:
    if cells.empty:
        return "text"
    if cells.isin((*TRUE_SPELLINGS, *FALSE_SPELLINGS)).all():
        return "bool"
    if cells.str.fullmatch(INTEGER).all():
        return "int"
    return "float" if cells.str.fullmatch(FLOAT).all() else "text"


def _typed_present(cells: pd.Series) -> np.ndarray:
    cells = cells.astype(str)
    found = _kind(cells)
    if found == "bool":
        return cells.isin(TRUE_SPELLINGS).to_numpy(dtype=object)
    if found == "int":
        return np.array([int(cell) for cell in cells], dtype=object)  # Python ints: no 64-bit overflow
    if found == "float":
        return pd.to_numeric(cells.str.strip()).to_numpy(dtype=np.float64).astype(object)
    return cells.to_numpy(dtype=object)



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

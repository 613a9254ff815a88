"""What the spec tables share: the constructor of a spec read from MLE-bench's grade.py, and the note on how
labels compare. specs.py, specs_structured.py and specs_vision.py build on it (it imports none of them)."""

from __future__ import annotations

from .spec_types import GraderSpec, Values

LABEL_NOTE = (
    "Labels are compared as pandas reads them, like MLE-bench: true, TRUE and True are one boolean, and 1 and 0 "
    "equal True and False; other text is compared exactly. Where pandas would read one file's labels as text "
    "and the other's as booleans or numbers (MLE-bench then finds no row equal), their text is compared instead, "
    "and the report says so."
)


def _mle(cid: str, metric: str, id_column: str, targets: tuple[str, ...], values: Values, **kw) -> GraderSpec:
    """A spec read from MLE-bench's grade.py and prepare.py for this competition (not in lite-grading.md)."""
    return GraderSpec(cid, metric, id_column, targets, values, source="mle-bench grade.py", **kw)

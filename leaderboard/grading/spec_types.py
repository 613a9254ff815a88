"""The registry's base types: how a competition's submission lines up with its answers (Align), what
its values are (Values), and the GraderSpec that names its metric, columns and quirks. specs.py holds
one GraderSpec per competition; the engine, alignment, format check and table read these types."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .metrics import Metric, get_metric


class Align(StrEnum):
    ID = "id-match"  # ids must match the answers' exactly; MLE-bench sorts both by id
    POSITIONAL = "positional"  # row i of the submission is scored against row i of the answers
    SORT_UNCHECKED = "sort-by-id-unchecked"  # both sorted by id, compared by position, ids never checked


class Values(StrEnum):
    PROBABILITY = "probability"  # a finite number in [0, 1]
    NUMBER = "number"  # any finite number
    NON_NEGATIVE = "non-negative"  # finite and >= 0 (log-based errors)
    INTEGER = "integer"  # a whole number (class index, rating)
    TEXT = "text"  # compared as a string; empty cells are empty strings, never NaN
    LABEL = "label"  # typed as pandas reads the column (bool, number or text) and compared so (pandas_values)


SCORED = "medalboard: scored row"  # answers column the engine adds: scored_rows_column holds scored_rows_value


@dataclass(frozen=True)
class GraderSpec:
    competition_id: str
    metric: str
    id_column: str
    # None: every answers column except the id (wide one-hot files such as dog-breed's 120 breeds).
    target_columns: tuple[str, ...] | None
    values: Values
    alignment: Align = Align.ID
    exact_columns: bool = False  # the submission may hold only id + targets
    ordered_columns: bool = False  # ... and exactly in the order id, *targets (MLE-bench compares the header)
    rows_sum_to_one: bool = False
    row_sum_decimals: int | None = None  # MLE-bench's round(sum, d) == 1 instead of an absolute tolerance
    positional_columns: bool = False  # MLE-bench takes every non-id submission column by position
    unscored_answer_value: float | None = None  # answers rows holding this value are not scored
    scored_rows_column: str | None = None  # answers column: only rows holding scored_rows_value are scored (by id)
    scored_rows_value: object = True  # compared with the column as pandas types it (True == 'TRUE', 0 == '0.0')
    value_range: tuple[float, float] | None = None  # MLE-bench rejects predictions outside [low, high]
    # Answers columns the metric also needs (coupling type, identity flags), read as text and passed as a
    # third array (1-D for one column), row for row with y_true.
    context_columns: tuple[str, ...] = ()
    submission_targets: tuple[str, ...] | None = None  # the submission's names for target_columns, when they differ
    required_columns: tuple[str, ...] = ()  # the submission must have them, but they are not scored
    unique_ids: bool = True
    extra_ids_ignored: bool = False  # submission rows whose id is not in the answers are dropped, not rejected
    na_text_as_nan: bool = False  # MLE-bench reads text with pandas' NA parsing, then compares str()
    na_text_as_empty: bool = False  # MLE-bench reads text with pandas' NA parsing, then fillna("")
    na_text_rejected: bool = False  # ... and cannot score a missing cell at all
    expected_targets: int | None = None  # sanity check on target_columns=None answers files
    answers_layout: str | None = None  # answers not shaped like the submission: answers_layouts reshapes them
    rows_in_answers_order: bool = False  # MLE-bench pairs rows by position and asserts equal ids row by row
    # The text labels a prediction may take (the public train.csv's): set for the generic grader only, whose
    # rules are ours; MLE-bench's graders score an unknown label as a wrong one and so do their specs.
    label_classes: frozenset[str] | None = None
    source: str = "lite-grading.md"
    notes: tuple[str, ...] = ()

    @property
    def metric_info(self) -> Metric:
        return get_metric(self.metric)

    @property
    def lower_is_better(self) -> bool:
        return self.metric_info.lower_is_better

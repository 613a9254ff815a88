"""docs/grading.md's table, generated from the specs so that it stays true: one row per catalogue competition
with its metric, how rows are aligned, how values are read, and every known difference from MLE-bench and
Kaggle (the notes every report for it carries). `python manage.py grading_table > docs/grading.md`."""

from __future__ import annotations

from collections.abc import Iterable

from .spec_types import Align, GraderSpec, Values
from .specs import grader_for

HEADER = """# Grading: how each competition is scored

Generated from `leaderboard/grading/specs.py` by `python manage.py grading_table > docs/grading.md`; a test
fails when this file and the specs disagree. Every report for a competition carries the notes shown in its
last column, and its competition page lists them.

Common to all: both files are read like MLE-bench's `pandas.read_csv`; ids compare as pandas types them
(`00012` is the integer 12, `12.0` equals `12`), so a submission that differs from the answers only in
spelling is matched; the score is rounded to 5 decimals, as MLE-bench rounds it. Scores are on MLE-bench's
held-out test split, not Kaggle's private leaderboard, so they are comparable with MLE-bench, and with
Kaggle's medal thresholds only as MLE-bench compares them. Where MLE-bench is itself wrong the report keeps
the sensible result and its notes give the number MLE-bench would print (`leaderboard/grading/divergences.py`).

| Competition | Metric | Rows aligned | Values read | Known differences from MLE-bench and Kaggle |
|---|---|---|---|---|
"""

ALIGNMENT = {
    Align.ID: "by `{id}`: every id of the answers exactly once",
    Align.POSITIONAL: "by position, as MLE-bench does (ids not checked; the report says what matching by id gives)",
    Align.SORT_UNCHECKED: "both sorted by `{id}`, then by position, as MLE-bench does (ids not checked)",
}
VALUES = {
    Values.PROBABILITY: "numbers in [0, 1]",
    Values.NUMBER: "finite numbers",
    Values.NON_NEGATIVE: "finite numbers >= 0",
    Values.INTEGER: "whole numbers",
    Values.TEXT: "text, compared exactly",
    Values.LABEL: "labels typed as pandas reads them (`true`/`TRUE`/`1` are True; `1.0` is 1)",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rows_aligned(spec: GraderSpec) -> str:
    parts = [ALIGNMENT[spec.alignment].format(id=spec.id_column)]
    if not spec.unique_ids:
        parts = [f"by `{spec.id_column}`; repeated ids paired in file order, each as often as in the answers"]
    if spec.extra_ids_ignored:
        parts.append("rows whose id is not in the answers are ignored")
    if spec.scored_rows_column:
        parts.append(f"only answers rows with `{spec.scored_rows_column}` == {spec.scored_rows_value!r} are scored")
    if spec.unscored_answer_value is not None:
        parts.append(f"answers cells equal to {spec.unscored_answer_value:g} are not scored")
    if spec.rows_in_answers_order:
        parts.append("rows must also be in the answers' order (MLE-bench pairs them by position)")
    if spec.answers_layout:
        parts.append(f"answers regrouped one row per `{spec.id_column}` ({spec.answers_layout})")
    return "; ".join(parts)


def _columns(spec: GraderSpec) -> str:
    if spec.target_columns is None:
        return f"every answers column but `{spec.id_column}` ({spec.expected_targets or 'all'} classes)"
    named = spec.submission_targets or spec.target_columns
    shown = ", ".join(f"`{c}`" for c in named[:4]) + (f" and {len(named) - 4} more" if len(named) > 4 else "")
    return shown


def values_read(spec: GraderSpec) -> str:
    parts = [f"{_columns(spec)}: {VALUES[spec.values]}"]
    if spec.value_range:
        parts.append(f"each in [{spec.value_range[0]:g}, {spec.value_range[1]:g}]")
    if spec.rows_sum_to_one:
        parts.append("rows sum to 1" + (f" (rounded to {spec.row_sum_decimals} decimals)"
                                       if spec.row_sum_decimals is not None else ""))
    if spec.na_text_as_nan:
        parts.append("NA spellings read as the text 'nan'")
    if spec.na_text_as_empty:
        parts.append("NA spellings read as empty")
    if spec.na_text_rejected:
        parts.append("NA spellings rejected")
    parts.extend(_shape(spec))
    return "; ".join(parts)


def _shape(spec: GraderSpec) -> Iterable[str]:
    if spec.positional_columns:
        yield "prediction columns taken by position, not name"
    if spec.ordered_columns:
        yield "header must be exactly the id and the classes, in order"
    elif spec.exact_columns:
        yield "no other columns allowed"
    if spec.required_columns:
        yield "also required, not scored: " + ", ".join(f"`{c}`" for c in spec.required_columns)


def row(competition_id: str) -> str:
    spec = grader_for(competition_id)
    if spec is None:
        return f"| {competition_id} | not graded yet (see graders) | | | |"
    metric = f"`{spec.metric}` ({'lower' if spec.lower_is_better else 'higher'} is better)"
    notes = "<br>".join(_cell(note) for note in spec.notes) or "none known"
    return (f"| {competition_id} | {metric} | {_cell(rows_aligned(spec))} | {_cell(values_read(spec))} | "
            f"{notes} |")


def grading_table(competition_ids: Iterable[str]) -> str:
    return HEADER + "".join(row(cid) + "\n" for cid in sorted(competition_ids, key=str.lower))

"""grade_submission: one submission file of one competition -> a GradingReport. Never raises for
bad input, and never puts answer values or the answers' location in the report."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import answers_cache, answers_layouts, divergences, format_check, pandas_values, reading, validation
from .align import align
from .report import GradingReport
from .spec_types import SCORED, GraderSpec, Values
from .specs import grader_for, grader_name
from .validation import SubmissionError

if TYPE_CHECKING:  # runtime import-free, so the engine loads before Django's app registry
    from leaderboard.models import Competition

log = logging.getLogger(__name__)
REFERENCE_NOTE = ("medals, rank and share beaten are against a reference leaderboard (simple baselines), "
                  "not Kaggle humans")

TEXT_VALUES = (Values.TEXT, Values.LABEL)  # read as text; LABEL is then typed as pandas types it


class AnswersError(Exception):
    """The private answers are missing or unusable: an operator problem, never the submitter's."""


def grade_submission(competition: Competition, submission_path: Path | None,
                     answers_path: Path | None = None) -> GradingReport:
    spec = grader_for(competition)
    report = _new_report(competition, spec)
    if spec is None:
        report.grading_available = False
        report.error = (f"grading is not available for {competition.slug}: no grader is defined for its metric "
                        f"{competition.config_metric or '(none named)'!r}")
        return report
    if submission_path is None or not Path(submission_path).is_file():
        report.error = "no submission file"
        return report
    report.submission_exists = True
    answers = Path(answers_path) if answers_path else format_check.answers_file(competition)
    if answers is None:
        return _await_answers(report, competition, spec, Path(submission_path))
    return _score_into(report, competition, spec, Path(submission_path), answers)


def _await_answers(report: GradingReport, competition: Competition, spec: GraderSpec,
                   submission: Path) -> GradingReport:
    """No answers here yet: a bad file is still invalid now; a good one waits to be scored."""
    try:
        checked = check_format(spec, submission, format_check.sample_submission(competition))
    except SubmissionError as exc:
        report.error = f"invalid submission: {exc}"
        return report
    report.grading_available = False  # nothing was scored: the run stays unverified
    report.awaiting_answers = True
    report.notes.append(f"format checked against {checked}")
    report.error = (f"waiting for answers: this site has no answers registered for {competition.slug} yet, "
                    "so the run is graded when an administrator registers them (manage.py regrade)")
    return report


def _new_report(competition: Competition, spec: GraderSpec | None) -> GradingReport:
    report = GradingReport(competition_id=competition.slug)
    report.set_thresholds(competition.thresholds())
    if spec is not None:
        report.metric, report.is_lower_better = spec.metric, spec.lower_is_better
        report.grader = grader_name(spec)
        report.notes.extend(spec.notes)
        if competition.has_human_baseline and bool(competition.is_lower_better) != spec.lower_is_better:
            report.notes.append("the human leaderboard's direction disagrees with the metric's")
    if getattr(competition, "has_reference_leaderboard", False):
        report.notes.append(REFERENCE_NOTE)
    return report


def _score_into(report: GradingReport, competition: Competition, spec: GraderSpec, submission: Path,
                answers: Path) -> GradingReport:
    try:
        score, notes = score_files(spec, submission, answers)
    except SubmissionError as exc:
        report.error = f"invalid submission: {exc}"
        report.notes.extend(exc.notes)
        return report
    except AnswersError as exc:
        report.grading_available = False
        report.error = str(exc)
        return report
    except Exception:  # noqa: BLE001 - a grading bug must not take the caller down; the log keeps it
        log.exception("grading %s failed", competition.slug)
        report.grading_available = False
        report.error = "internal grading error; the administrators have the details in the log"
        return report
    report.notes.extend(notes)
    if not math.isfinite(score):
        report.error = "the metric is undefined for this submission (it evaluated to NaN)"
        report.notes.extend([divergences.UNDEFINED_SCORE_NOTE] if math.isnan(score) else [])
        return report
    human = list(competition.human_scores.values_list("score", flat=True))
    report.set_score(score, competition.thresholds(), human)
    return report


def score_files(spec: GraderSpec, submission: Path, answers: Path) -> tuple[float, list[str]]:
    """The metric value and any notes; SubmissionError for a bad file, AnswersError for bad answers."""
    answers_header = _answers(lambda: _answers_header(spec, answers))
    targets = _targets(spec, answers_header)
    header = reading.read_header(submission)
    sub_targets = _submission_targets(spec, header, targets)
    sub = _read(spec, submission, sub_targets, every_column=True)
    ans = _answers(lambda: _read_answers(spec, answers, targets))
    validation.check_not_empty(len(sub))
    validation.check_id_values(sub[spec.id_column].to_numpy(dtype=object), spec.id_column)
    _check_values(spec, sub, sub_targets)
    take = _taker(spec, targets, sub_targets)
    try:
        aligned = align(spec, sub, ans, take)
    except SubmissionError as exc:
        exc.notes = tuple(divergences.when_rejected(spec, sub, ans, take))
        raise
    y_true, y_pred = _drop_unscored(spec, aligned.y_true, aligned.y_pred, ans)
    if spec.values == Values.LABEL:
        y_true, y_pred, note = pandas_values.comparable(y_true, y_pred)
        aligned.notes.extend([note] if note else [])
    if spec.positional_columns and sub_targets != targets:
        aligned.notes.append(f"the prediction columns {sub_targets} were scored by position as {targets}; "
                             "a grader that matches columns by name would score them differently")
    context = _context(spec, ans, aligned.answers_order)
    score = spec.metric_info.fn(y_true, y_pred, *([] if context is None else [context]))
    graded = divergences.Graded(spec, score, sub, ans, take, y_true, y_pred, context)
    return score, [*aligned.notes, *divergences.notes_for(graded)]


def _context(spec: GraderSpec, ans: pd.DataFrame, answers_order: np.ndarray | None) -> np.ndarray | None:
    """The answers' context columns, row for row with y_true (1-D for one column); None without any."""
    if not spec.context_columns:
        return None
    context = ans[list(spec.context_columns)].to_numpy(dtype=object)
    context = context if answers_order is None else context[answers_order]
    return context[:, 0] if len(spec.context_columns) == 1 else context


def _answers(read: Callable):
    """Answers failures lose their detail on purpose: it could show the path or answer values."""
    try:
        return read()
    except Exception as exc:
        log.exception("reading answers failed")
        raise AnswersError("the competition's answers could not be read; ask an administrator") from exc


def _answers_header(spec: GraderSpec, path: Path) -> list[str]:
    return list(_layout_frame(spec, path).columns) if spec.answers_layout else reading.read_header(path)


def _layout_frame(spec: GraderSpec, path: Path) -> pd.DataFrame:
    return answers_cache.load(path, ("layout", spec.answers_layout),
                              lambda: answers_layouts.read(spec.answers_layout, path))


def _targets(spec: GraderSpec, answers_header: list[str]) -> list[str]:
    if spec.target_columns is not None:
        missing = [c for c in (spec.id_column, *spec.target_columns) if c not in answers_header]
        if missing:
            raise AnswersError("the competition's answers file does not have the expected columns")
        return list(spec.target_columns)
    targets = [c for c in answers_header if c != spec.id_column]
    if spec.id_column not in answers_header or (spec.expected_targets and len(targets) != spec.expected_targets):
        raise AnswersError("the competition's answers file does not have the expected columns")
    return targets


def _submission_targets(spec: GraderSpec, header: list[str], targets: list[str]) -> list[str]:
    """The submission columns to score; by position for MLE-bench's positional-column graders."""
    if spec.submission_targets:
        validation.check_header(header, list(spec.submission_targets), spec.exact_columns, spec.id_column)
        return list(spec.submission_targets)
    if not spec.positional_columns:
        validation.check_header(header, [*targets, *spec.required_columns], spec.exact_columns, spec.id_column)
        if spec.ordered_columns:
            validation.check_column_order(header, [spec.id_column, *targets])
        return targets
    validation.check_header(header, [], False, spec.id_column)
    columns = [c for c in header if c != spec.id_column]
    if len(columns) != len(targets):
        raise SubmissionError(f"expected {len(targets)} prediction columns besides {spec.id_column!r} "
                              f"({', '.join(targets)}), found {len(columns)}: {validation.sample(columns)}")
    return columns


def _read(spec: GraderSpec, path: Path, targets: list[str], every_column: bool,
          extra_text: tuple[str, ...] = ()) -> pd.DataFrame:
    text = spec.values in TEXT_VALUES
    return reading.read_frame(path, spec.id_column, [] if text else targets,
                              [*(targets if text else []), *extra_text], every_column)


def _read_answers(spec: GraderSpec, path: Path, targets: list[str]) -> pd.DataFrame:
    """Answers indexed by id (the index's hash table is what id alignment uses), cached per worker."""

    def read() -> pd.DataFrame:
        extra = (*((spec.scored_rows_column,) if spec.scored_rows_column else ()), *spec.context_columns)
        if spec.answers_layout:
            frame = _layout_frame(spec, path)[[spec.id_column, *targets, *extra]].copy()
            if spec.values not in TEXT_VALUES:
                frame[targets] = frame[targets].astype(np.float64)
        else:
            frame = _read(spec, path, targets, every_column=False, extra_text=extra)
        if spec.scored_rows_column:  # typed once per worker, not per grading
            frame[SCORED] = pandas_values.typed(frame[spec.scored_rows_column].to_numpy(dtype=object)) == \
                spec.scored_rows_value
        if spec.unique_ids:
            frame.index = pd.Index(frame[spec.id_column].to_numpy(dtype=object), dtype=object)
        return frame

    key = (spec.id_column, tuple(targets), spec.values, spec.unique_ids, spec.scored_rows_column,
           spec.scored_rows_value, spec.context_columns, spec.answers_layout)
    return answers_cache.load(path, key, read)


def _check_values(spec: GraderSpec, sub: pd.DataFrame, targets: list[str]) -> None:
    if spec.values in TEXT_VALUES:
        if spec.na_text_rejected:
            validation.check_no_missing_text(sub, targets)
        if spec.label_classes is not None:
            validation.check_known_labels(sub, targets, spec.label_classes)
        return  # any string is a valid prediction; an empty cell is an empty string
    validation.check_numbers(sub, targets, spec.values.value)
    if spec.value_range:
        validation.check_range(sub, targets, *spec.value_range)
    if spec.rows_sum_to_one:
        validation.check_rows_sum_to_one(sub[targets].to_numpy(dtype=np.float64), decimals=spec.row_sum_decimals)


def _taker(spec: GraderSpec, targets: list[str], sub_targets: list[str]) -> Callable:
    """Value arrays for the metric: 1-D for one target column, 2-D (rows x classes) otherwise."""
    dtype = object if spec.values in TEXT_VALUES else np.float64

    def take(frame: pd.DataFrame, is_submission: bool = False) -> np.ndarray:
        columns = sub_targets if is_submission else targets
        values = frame[columns].to_numpy(dtype=dtype)
        values = values[:, 0] if len(columns) == 1 else values
        if spec.na_text_as_empty:
            return _missing_as(values, "")
        return _missing_as(values, "nan") if spec.na_text_as_nan else values

    return take


def _missing_as(values: np.ndarray, text: str) -> np.ndarray:
    """MLE-bench's view of text: every NA spelling pandas recognises becomes NaN, which its graders then
    turn into str 'nan' (astype(str)) or '' (fillna(''))."""
    missing = pd.Series(values.ravel(), dtype=object).isin(validation.NA_STRINGS).to_numpy().reshape(values.shape)
    return np.where(missing, text, values).astype(object)


def _drop_unscored(spec: GraderSpec, y_true: np.ndarray, y_pred: np.ndarray,
                   ans: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    if spec.scored_rows_column:  # id alignment keeps y_true in the answers' row order
        scored = ans[SCORED].to_numpy(dtype=bool)
        return y_true[scored], y_pred[scored]
    if spec.unscored_answer_value is None:
        return y_true, y_pred
    scored = ~np.any(np.atleast_2d(y_true.T).T == spec.unscored_answer_value, axis=1)
    return y_true[scored], y_pred[scored]


def check_format(spec: GraderSpec, submission: Path, sample: Path | None) -> str:
    """A submission's format checked before the private answers are there to score it.

    A site that has no answers for a competition cannot grade its runs yet; that is the site's state, not a
    fault of the file, so such runs wait (Run.Status.WAITING) until `manage.py regrade` scores them. The file
    is still checked now, as far as the site can: against the sample submission when one is registered (the
    public data `mlebench prepare` made), or else against what the grader itself knows (a readable CSV with
    the id column and the named prediction columns). Returns what the check compared against; SubmissionError
    when the file is not a valid submission."""
    if sample is not None:
        return _against_sample(spec, submission, sample)
    header = reading.read_header(submission)
    validation.check_header(header, _known_targets(spec), False, spec.id_column)
    frame = reading.read_frame(submission, spec.id_column, [], [], every_column=True)
    validation.check_not_empty(len(frame))
    return "the grader's columns (no sample submission registered: ids and values are checked once answers arrive)"


def _against_sample(spec: GraderSpec, submission: Path, sample: Path) -> str:
    """The sample submission stands in for the answers: same ids, same columns, values of the right kind.
    Its own values are placeholders, so only SubmissionError counts; anything the sample cannot stand
    in for (a grader that needs answer-only columns) falls back to comparing headers."""
    try:
        score_files(spec, submission, sample)
    except SubmissionError:
        raise
    except Exception:  # noqa: BLE001 - the sample is not an answers file for this grader
        sample_header = reading.read_header(sample)
        targets = [c for c in sample_header if c != spec.id_column]
        validation.check_header(reading.read_header(submission), targets, False, spec.id_column)
        frame = reading.read_frame(submission, spec.id_column, [], [], every_column=True)
        validation.check_not_empty(len(frame))
        return "the sample submission's columns"
    return "the sample submission (columns, ids and values)"


def _known_targets(spec: GraderSpec) -> list[str]:
    if spec.positional_columns:
        return []
    return list(spec.submission_targets or spec.target_columns or ()) + list(spec.required_columns)

"""A grader with no code for custom competitions: the config names a metric, the sample submission the columns.

A competition folder in MLE-bench's layout whose config.yaml says e.g. `grader: {name: accuracy}`, and
that has no spec of its own (specs.SPECS holds one for every MLE-bench competition, read from its
grade.py), gets a generic GraderSpec. What its config's `grade_fn` says does not matter: configs written
from MLE-bench's template name `mlebench.competitions.<id>.grade:grade` whatever the competition is.

- the id column is the first column of the sample submission and the targets are the rest;
- the metric is the registry's metric of that name (MLE-bench's spellings, such as auc-roc or
  root-mean-squared-error, are accepted too);
- the value type follows from the metric: labels are compared as pandas types them, as MLE-bench's
  graders do (pandas_values: "12.0" equals "12", true equals True, other text compares exactly);
  probabilities must be in [0, 1] (and a row of class probabilities must sum to 1); numbers must be
  finite.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from django.core.exceptions import ObjectDoesNotExist

from .metrics import METRICS

if TYPE_CHECKING:
    from leaderboard.models import Competition

    from .spec_types import GraderSpec

log = logging.getLogger(__name__)

TRAIN_CLASSES_MAX_BYTES = 50 << 20  # a larger train.csv is not read for its classes on every grading
MAX_CLASSES = 1000

# MLE-bench's config spellings of metrics the registry has; every registry name also stands for itself.
CONFIG_NAMES = {
    "auc-roc": "roc-auc", "auroc": "roc-auc", "roc_auc": "roc-auc",
    "multi-class-classification-accuracy": "accuracy",
    "root-mean-squared-error": "rmse", "root_mean_squared_error": "rmse",
    "root-mean-squared-log-error": "rmsle", "mean-absolute-error": "mae",
    "f1-score": "f1", "f1_score": "f1", "binary-f1": "f1", "binary-f1-score": "f1",
    "macro-f1-score": "f1-macro", "micro-f1-score": "f1-micro", "matthews-correlation-coefficient": "mcc",
    "pearson-correlation-coefficient": "pearson", "spearman-correlation-coefficient": "spearman",
    "logloss": "log-loss", "binary-log-loss": "log-loss", "column-wise-spearman": "mean-column-wise-spearman",
    "column-wise ROC AUC": "mean-column-wise-roc-auc",
    "map-at-5": "map@5", "mean-average-precision-at-5": "map@5",
    "levenshtein-distance": "levenshtein", "jaccard-similarity": "jaccard", "word-level-jaccard-score": "jaccard",
}
# The value type (spec_types.Values, by value) each metric scores. Text: "top-1-error" reads the first token, MAP@5
# space-separated ranked guesses, levenshtein and jaccard sentences, each as the text it is.
VALUE_TYPES = {
    **dict.fromkeys(("accuracy", "f1", "f1-micro", "f1-macro", "mcc"), "label"),
    **dict.fromkeys(("top-1-error", "map@5", "levenshtein", "jaccard"), "text"),
    **dict.fromkeys(("log-loss", "multi-class-log-loss"), "probability"),
    "quadratic-weighted-kappa": "integer",
    **dict.fromkeys(("rmsle", "mean-column-wise-rmsle"), "non-negative"),
    **dict.fromkeys(("roc-auc", "mean-column-wise-roc-auc", "rmse", "mean-column-wise-rmse", "mae", "pearson",
                     "spearman", "mean-column-wise-spearman"), "number"),
}
GENERIC_NOTE = ("A custom competition graded by the generic grader: the config names the metric, the id column "
                "is the sample submission's first column and the prediction columns are the rest.")
FOREIGN_GRADE_FN_NOTE = ("The config names the grade function {grade_fn!r}, which this site does not run: the generic "
                         "grader scored the metric the config names instead.")


def registry_metric(config_name: str) -> str | None:
    """The registry name for a config's grader.name, if the generic grader can compute it."""
    for name in (config_name.strip(), config_name.strip().lower()):
        name = name if name in METRICS else CONFIG_NAMES.get(name, "")
        if name in VALUE_TYPES:
            return name
    return None


def generic_spec(competition: Competition) -> GraderSpec | None:
    """The generic spec of a competition without a spec of its own (the caller checks that), if its
    config's metric is one the registry computes and its sample submission has an id and a target."""
    metric = registry_metric(competition.config_metric)
    header = _sample_header(competition) if metric else None
    if not header or len(header) < 2:
        return None
    targets = tuple(header[1:])
    if len(targets) > 1 and not METRICS[metric].multi_column:
        return None  # a one-column metric cannot score several columns; no number beats a wrong number
    classes = _train_classes(competition, targets[0]) if VALUE_TYPES[metric] == "label" and len(targets) == 1 else None
    return _spec(competition.slug, metric, header[0], targets, _notes(competition), classes)


def _train_classes(competition: Competition, target: str) -> frozenset[str] | None:
    """The text labels of the target column of the public train.csv, when it has a small set of them
    that are not numbers (numbers compare as pandas types them: "1.0" is 1, so no text set holds them)."""
    import pandas as pd  # only when a grader is looked for, not at import (manage.py's start-up)

    from .reading import read_header

    path = Path(competition.public_data_dir) / "train.csv" if competition.public_data_dir else None
    if path is None or not path.is_file() or path.stat().st_size > TRAIN_CLASSES_MAX_BYTES:
        return None
    try:
        header = read_header(path)
        if target not in header:
            return None
        labels = pd.read_csv(path, usecols=[target], dtype=str, keep_default_na=False)[target].unique()
    except Exception:  # noqa: BLE001 - unreadable training data means no class check, not a crash
        log.warning("cannot read the training labels of %s", competition.slug)
        return None
    if not 0 < len(labels) <= MAX_CLASSES or any(_is_number(label) for label in labels):
        return None
    return frozenset(labels)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text.strip().lower() in ("true", "false", "")  # pandas would type these too
    return True


def _notes(competition: Competition) -> tuple[str, ...]:
    grade_fn = competition.grade_fn.strip()
    return (GENERIC_NOTE, *([FOREIGN_GRADE_FN_NOTE.format(grade_fn=grade_fn)] if grade_fn else []))


def _spec(slug: str, metric: str, id_column: str, targets: tuple[str, ...], notes: tuple[str, ...],
          classes: frozenset[str] | None = None) -> GraderSpec:
    from .spec_types import GraderSpec, Values

    return GraderSpec(slug, metric, id_column, targets, Values(VALUE_TYPES[metric]),
                      rows_sum_to_one=metric == "multi-class-log-loss", source="generic", notes=notes,
                      label_classes=classes)


def _sample_header(competition: Competition) -> list[str] | None:
    """The sample submission's header: the registered one, else the public data's sample_submission.csv."""
    from .reading import read_header  # with pandas: only when a grader is looked for, not at import

    candidates = [Path(p) for p in (_registered_sample(competition),) if p]
    if competition.public_data_dir:
        candidates.append(Path(competition.public_data_dir) / "sample_submission.csv")
    for path in candidates:
        if path.is_file():
            try:
                return read_header(path)
            except Exception:  # noqa: BLE001 - an unreadable sample means no generic grader, not a crash
                log.warning("cannot read the sample submission header of %s", competition.slug)
    return None


def _registered_sample(competition: Competition) -> str:
    try:
        return competition.answers.sample_submission_path
    except ObjectDoesNotExist:
        return ""

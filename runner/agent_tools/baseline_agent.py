#!/usr/bin/env python3
"""Medalboard's built-in baseline agent: no language model, a time-budgeted scikit-learn search.

It reads train.csv, test.csv and sample_submission.csv (and description.md, if present) from
DATA_DIR; takes the id column (first column of the sample submission) and the target column(s) (the
rest); infers the task: classification (labels, string or numeric or boolean), probabilities (one
probability column of a binary target, or one column per class), regression (one or several
targets); encodes numeric and categorical features (imputation, one-hot or ordinal encoding); and
cross-validates several candidate pipelines, cheapest first, inside the time budget
(TIME_LIMIT_SECONDS minus a safety margin; a candidate still running at the deadline is abandoned).
A constant prediction's submission is written within seconds, before scikit-learn is even imported;
SUBMISSION_DIR/submission.csv is then rewritten (temp file, format check, rename) each time the
validation score improves (out-of-fold; on fewer folds when time is short). Every step goes to
LOGS_DIR/trajectory.jsonl in Medalboard's JSONL trajectory format (docs/trajectory-format.md), one
flushed line per step, and each candidate's code (the very source that builds its pipeline) is saved
to CODE_DIR.

Environment: DATA_DIR, SUBMISSION_DIR, LOGS_DIR, CODE_DIR, TOOLS_DIR, TIME_LIMIT_SECONDS, SEED
(default 0), N_JOBS (default: up to 4 CPUs), COMPETITION_ID (optional, for the trajectory header).
The command-line options override them; run `python baseline_agent.py --help`. With TASK_KIND=research
it works on an MLAgentBench research task instead (WORKSPACE_DIR, RESEARCH_PROBLEM; research_mode.py).

Standalone: Python 3.9+ with numpy, pandas and scikit-learn only. Supported versions: scikit-learn
1.2 to 1.9 and pandas 1.5 to 3.x (Debian bookworm's python3-sklearn 1.2 / python3-pandas 1.5 as well
as the project's virtualenv). Only APIs present in all of them are used: no `sparse_output`, no
`set_output`, no `squared=` in metrics, and categorical values are passed to scikit-learn as plain
Python strings in object arrays.

Deterministic given SEED and enough time: folds, subsamples and models take the seed, and so do the
candidates' hyperparameters (seed 0 runs the defaults, every other seed its own draw around them);
the budget only decides how many candidates are tried.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# OpenMP (gradient boosting) and BLAS read these when numpy/scikit-learn load: one pool of N_JOBS threads,
# not one per visible core, which on a busy or CPU-limited sandbox spins and stalls.
THREADS = os.environ.get("N_JOBS") or str(min(4, _cpus()))
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, THREADS)

import numpy as np  # noqa: E402 - after the thread settings above
import pandas as pd  # noqa: E402

AGENT = "medalboard-baseline 1.0"
MISSING_LABEL = "__missing__"
CV_MAX_ROWS = 30_000  # cross-validation subsample; the final fit uses up to FIT_MAX_ROWS
FIT_MAX_ROWS = 200_000
MAX_ONEHOT = 30  # categorical columns with more levels are only ordinal-encoded
MAX_CLASSES = 30  # an integer target with at most this many values (and few per row) is a class label
PROBABILITY_WORDS = re.compile(r"probabilit|log[\s_-]?loss|\broc\b|\bauc\b|auroc", re.I)  # not "process"


# --------------------------------------------------------------------------------------------- trajectory
class Trajectory:
    """Medalboard JSONL: a header line, then one flushed line per step (a live reader sees whole lines)."""

    def __init__(self, path: str, header: dict, start: float) -> None:
        self.start, self.index = start, 0
        self.handle = open(path, "w", encoding="utf-8")
        self._write(header)

    def _write(self, obj: dict) -> None:
        self.handle.write(json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n")
        self.handle.flush()

    def step(self, kind: str, title: str = "", text: str = "", data: dict | None = None,
             score: float | None = None) -> int:
        line = {"index": self.index, "kind": kind, "t": round(time.monotonic() - self.start, 3),
                "title": title[:500], "text": text, "data": data or {}}
        if score is not None and math.isfinite(score):
            line["score"] = float(score)
        self._write(line)
        self.index += 1
        return self.index - 1


# --------------------------------------------------------------------------------------------- the task
@dataclass
class Task:
    id_column: str
    targets: list  # the sample submission's prediction columns
    kind: str  # "labels", "binary-probability", "class-probabilities", "regression"
    source: list  # train columns the model learns from (one, or one per target for regression)
    classes: list = field(default_factory=list)  # raw label strings, for labels and probabilities
    positive: str = ""  # binary-probability: the class whose probability is written
    column_class: dict = field(default_factory=dict)  # class-probabilities: target column -> class
    metric: str = "accuracy"
    maximize: bool = True
    spelling: dict = field(default_factory=dict)  # boolean labels as the sample submission spells them

    def describe(self) -> str:
        what = {"labels": "classification (write class labels)",
                "binary-probability": f"binary classification (write the probability of {self.positive!r})",
                "class-probabilities": "classification (write one probability column per class)",
                "regression": "regression"}[self.kind]
        classes = f"; classes: {', '.join(map(repr, self.classes[:10]))}" if self.classes else ""
        return (f"id column {self.id_column!r}; predict {', '.join(map(repr, self.targets))} from "
                f"{', '.join(map(repr, self.source))}: {what}{classes}; validation metric {self.metric}")


def _is_missing(values: pd.Series) -> pd.Series:
    return values.str.strip().isin(["", "nan", "NaN", "NA", "N/A", "null", "None"])


def _bool_like(labels) -> bool:
    return len(labels) > 0 and {str(v).strip().lower() for v in labels} <= {"true", "false"}


def _sample_numbers(sample: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(sample[column], errors="coerce")


def _wants_probability(sample: pd.DataFrame, column: str, description: str) -> bool:
    numbers = _sample_numbers(sample, column)
    if numbers.isna().any() or ((numbers < 0) | (numbers > 1)).any():
        return False
    fractional = ((numbers > 0) & (numbers < 1)).any()
    return bool(fractional or PROBABILITY_WORDS.search(description))


def infer_task(train_raw: pd.DataFrame, test_columns: list, sample: pd.DataFrame, description: str) -> Task:
    id_column, targets = sample.columns[0], list(sample.columns[1:])
    if not targets:
        raise ValueError("the sample submission has no prediction column besides the id")
    if all(t in train_raw.columns for t in targets):
        if len(targets) == 1:
            return _single_target(train_raw, sample, targets[0], id_column, description)
        return Task(id_column, targets, "regression", targets, metric=_regression_metric(description), maximize=False)
    label = _class_column(train_raw, test_columns, targets, id_column)
    if label is None:
        raise ValueError(f"cannot find the target(s) {targets} in train.csv, nor a label column whose "
                         "classes name the sample submission's columns")
    column, mapping = label
    metric = "roc-auc" if re.search(r"\bauc\b|\broc\b|auroc", description, re.I) and len(targets) > 2 else "log-loss"
    return Task(id_column, targets, "class-probabilities", [column], classes=sorted(set(mapping.values())),
                column_class=mapping, metric=metric, maximize=metric != "log-loss")


def _single_target(train_raw, sample, target, id_column, description) -> Task:
    raw = train_raw[target][~_is_missing(train_raw[target])]
    classes = sorted(raw.unique().tolist())
    numbers = pd.to_numeric(raw, errors="coerce")
    if numbers.isna().any():  # text or boolean labels
        return _classification(sample, target, id_column, classes, description)
    integral = bool((numbers == numbers.round()).all())
    if integral and len(classes) <= MAX_CLASSES and len(classes) <= max(2, 0.2 * len(raw)):
        classes = sorted(classes, key=lambda c: float(c))
        return _classification(sample, target, id_column, classes, description)
    return Task(id_column, [target], "regression", [target], metric=_regression_metric(description), maximize=False)


def _classification(sample, target, id_column, classes, description) -> Task:
    if len(classes) == 2 and _wants_probability(sample, target, description):
        positive = _positive_class(classes, target)
        metric = "log-loss" if re.search(r"log[\s_-]?loss", description, re.I) else "roc-auc"
        return Task(id_column, [target], "binary-probability", [target], classes=classes, positive=positive,
                    metric=metric, maximize=metric == "roc-auc")
    task = Task(id_column, [target], "labels", [target], classes=classes, metric="accuracy")
    if _bool_like(classes):
        task.spelling = _bool_spelling(sample[target], classes)
    return task


def _positive_class(classes: list, target: str) -> str:
    lowered = {c.strip().lower(): c for c in classes}
    for name in ("true", "1", "yes", "1.0", target.lower()):
        if name in lowered:
            return lowered[name]
    return classes[-1]


def _bool_spelling(sample_column: pd.Series, classes: list) -> dict:
    """Train's True/False labels, spelled as the sample submission spells booleans (true, TRUE, ...)."""
    seen = [v for v in sample_column.astype(str) if v.strip().lower() in ("true", "false")]
    if not seen:
        return {}
    style = seen[0].strip()
    if style.isupper():
        case = str.upper
    elif style.islower():
        case = str.lower
    else:
        case = str.capitalize
    return {c: case(c.strip().lower()) for c in classes}


def _regression_metric(description: str) -> str:
    if re.search(r"logarithmic|rmsle", description, re.I):
        return "rmsle"
    if re.search(r"mean absolute error|\bmae\b", description, re.I):
        return "mae"
    return "rmse"


def _class_column(train_raw, test_columns, targets, id_column):
    """A train column (absent from test) whose values name the target columns: ('species', {col: class})."""
    for column in train_raw.columns:
        if column in test_columns or column == id_column:
            continue
        values = train_raw[column][~_is_missing(train_raw[column])].unique().tolist()
        mapping = _match_classes(values, targets)
        if mapping is not None:
            return column, mapping
    return None


def _match_classes(values: list, targets: list) -> dict | None:
    if not values or len(values) > len(targets):
        return None
    mapping = {}
    for target in targets:
        hits = [v for v in values if v == target] or [
            v for v in values if target.endswith(v) and not target[-len(v) - 1:-len(v)].isalnum()]
        if len(hits) == 1:
            mapping[target] = hits[0]
    matched = set(mapping.values())
    return mapping if len(mapping) == len(targets) and matched == set(values) else None


# --------------------------------------------------------------------------------------------- features
@dataclass
class Features:
    numeric: list
    categorical: list  # one-hot candidates (few levels)
    high_cardinality: list  # many levels: ordinal only
    dropped: list

    def describe(self) -> str:
        parts = [f"{len(self.numeric)} numeric", f"{len(self.categorical)} categorical",
                 f"{len(self.high_cardinality)} high-cardinality categorical (ordinal only)"]
        if self.dropped:
            parts.append(f"dropped {', '.join(map(repr, self.dropped[:10]))} (constant, empty or id-like)")
        return "; ".join(parts)


def choose_features(train: pd.DataFrame, test: pd.DataFrame, task: Task) -> Features:
    skip = {task.id_column, *task.targets, *task.source}
    features = Features([], [], [], [])
    for column in [c for c in test.columns if c in train.columns and c not in skip]:
        values = train[column]
        if values.isna().all() or values.nunique(dropna=False) <= 1:
            features.dropped.append(column)
        elif pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            features.numeric.append(column)
        elif values.nunique() > 0.9 * len(values) and len(values) > 50:
            features.dropped.append(column)  # free text or an id: one level per row teaches nothing
        elif values.nunique() > MAX_ONEHOT:
            features.high_cardinality.append(column)
        else:
            features.categorical.append(column)
    return features


def feature_frame(frame: pd.DataFrame, features: Features) -> pd.DataFrame:
    """Numbers as float64 and categories as Python strings in object columns, on every pandas version."""
    columns = {c: pd.to_numeric(frame[c], errors="coerce").astype("float64").to_numpy() for c in features.numeric}
    for c in features.categorical + features.high_cardinality:
        text = [MISSING_LABEL if _cell_missing(v) else str(v) for v in frame[c].tolist()]
        columns[c] = np.asarray(text, dtype=object)
    return pd.DataFrame(columns, index=range(len(frame)))


def _cell_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


# --------------------------------------------------------------------------------------------- candidates
PREAMBLE = '''"""{title}

Written by Medalboard's baseline agent ({agent}); the agent builds its pipeline by running this file's
build(). Features: {features}.
"""
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
{model_import}

NUMERIC = {numeric!r}
CATEGORICAL = {categorical!r}  # strings; missing values are the string {missing!r}
'''

ONEHOT_BUILD = '''

def build():
    numeric = make_pipeline(SimpleImputer(strategy="median", add_indicator=True), StandardScaler())
    categorical = OneHotEncoder(handle_unknown="ignore")
    features = ColumnTransformer([("num", numeric, NUMERIC), ("cat", categorical, CATEGORICAL)],
                                 sparse_threshold=0)
    return make_pipeline(features, {model})
'''

ORDINAL_BUILD = '''

def build():
    numeric = SimpleImputer(strategy="median", add_indicator=True)
    categorical = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    features = ColumnTransformer([("num", numeric, NUMERIC), ("cat", categorical, CATEGORICAL)],
                                 sparse_threshold=0)
    return make_pipeline(features, {model})
'''



@dataclass(frozen=True)
class Candidate:
    name: str
    module: str
    model: str  # constructor source; {seed}, {n_jobs} and the search's names are filled in
    encoding: str  # "onehot" or "ordinal"
    why: str
    search: tuple = ()  # (name, default, low, high): seed 0 takes the default, other seeds draw in [low, high]

    def settings(self, seed: int) -> dict:
        """The hyperparameters a seed runs: the defaults for seed 0; for any other seed each drawn
        log-uniformly from its range, so a job's seeds are different runs of one search (not the
        same deterministic models refitted), and a seed always draws the same ones."""
        if seed == 0:
            return {name: default for name, default, _, _ in self.search}
        rng = random.Random(f"{seed}/{self.name}")
        drawn = {}
        for name, default, low, high in self.search:
            value = math.exp(rng.uniform(math.log(low), math.log(high)))
            drawn[name] = int(round(value)) if isinstance(default, int) else float(f"{value:.3g}")
        return drawn

    def source(self, features: Features, seed: int, n_jobs: int, title: str) -> str:
        cls = self.model.split("(")[0]
        onehot = self.encoding == "onehot"
        categorical = features.categorical if onehot else features.categorical + features.high_cardinality
        head = PREAMBLE.format(title=title, agent=AGENT, features=features.describe(),
                               model_import=f"from sklearn.{self.module} import {cls}",
                               numeric=features.numeric, categorical=categorical, missing=MISSING_LABEL)
        body = ONEHOT_BUILD if onehot else ORDINAL_BUILD
        return head + body.format(model=self.model.format(seed=seed, n_jobs=n_jobs, **self.settings(seed)))


LEAF = (("leaf", 1, 1, 4),)
CLASSIFIERS = (
    Candidate("logistic", "linear_model", "LogisticRegression(C={C}, max_iter=2000)", "onehot",
              "a linear model on scaled numbers and one-hot categories", (("C", 1.0, 0.3, 3.0),)),
    Candidate("random-forest", "ensemble",
              "RandomForestClassifier(n_estimators=300, min_samples_leaf={leaf}, random_state={seed}, n_jobs={n_jobs})",
              "ordinal", "a random forest: non-linear, robust to scale", LEAF),
    Candidate("hist-gradient-boosting", "ensemble",
              "HistGradientBoostingClassifier(learning_rate={rate}, max_iter=200, random_state={seed})", "ordinal",
              "gradient-boosted trees, usually the strongest on tabular data", (("rate", 0.1, 0.05, 0.2),)),
    Candidate("extra-trees", "ensemble",
              "ExtraTreesClassifier(n_estimators=300, min_samples_leaf={leaf}, random_state={seed}, n_jobs={n_jobs})",
              "ordinal", "extremely randomised trees: a different bias from the forest", (("leaf", 2, 1, 4),)),
    Candidate("logistic-strong-l2", "linear_model", "LogisticRegression(C={C}, max_iter=2000)", "onehot",
              "the linear model with stronger regularisation", (("C", 0.1, 0.03, 0.3),)),
    Candidate("hist-gradient-boosting-slow", "ensemble",
              "HistGradientBoostingClassifier(learning_rate={rate}, max_iter=500, max_leaf_nodes=15, "
              "l2_regularization={l2}, random_state={seed})", "ordinal",
              "slower-learning, smaller boosted trees", (("rate", 0.05, 0.03, 0.08), ("l2", 1.0, 0.3, 3.0))),
    Candidate("k-nearest-neighbours", "neighbors", "KNeighborsClassifier(n_neighbors={k}, weights='distance')",
              "onehot", "nearest neighbours on scaled features", (("k", 15, 7, 30),)),
)

REGRESSORS = (
    Candidate("ridge", "linear_model", "Ridge(alpha={alpha})", "onehot",
              "a linear model on scaled numbers and one-hot categories", (("alpha", 1.0, 0.3, 3.0),)),
    Candidate("random-forest", "ensemble",
              "RandomForestRegressor(n_estimators=300, min_samples_leaf={leaf}, random_state={seed}, n_jobs={n_jobs})",
              "ordinal", "a random forest: non-linear, robust to scale", LEAF),
    Candidate("hist-gradient-boosting", "ensemble",
              "HistGradientBoostingRegressor(learning_rate={rate}, max_iter=200, random_state={seed})", "ordinal",
              "gradient-boosted trees, usually the strongest on tabular data", (("rate", 0.1, 0.05, 0.2),)),
    Candidate("extra-trees", "ensemble",
              "ExtraTreesRegressor(n_estimators=300, min_samples_leaf={leaf}, random_state={seed}, n_jobs={n_jobs})",
              "ordinal", "extremely randomised trees: a different bias from the forest", (("leaf", 2, 1, 4),)),
    Candidate("ridge-strong", "linear_model", "Ridge(alpha={alpha})", "onehot",
              "the linear model with stronger regularisation", (("alpha", 10.0, 3.0, 30.0),)),
    Candidate("hist-gradient-boosting-slow", "ensemble",
              "HistGradientBoostingRegressor(learning_rate={rate}, max_iter=500, max_leaf_nodes=15, "
              "l2_regularization={l2}, random_state={seed})", "ordinal",
              "slower-learning, smaller boosted trees", (("rate", 0.05, 0.03, 0.08), ("l2", 1.0, 0.3, 3.0))),
    Candidate("k-nearest-neighbours", "neighbors", "KNeighborsRegressor(n_neighbors={k}, weights='distance')",
              "onehot", "nearest neighbours on scaled features", (("k", 15, 7, 30),)),
)


def build_pipeline(source: str):
    namespace: dict = {"__name__": "candidate"}
    exec(compile(source, "<candidate>", "exec"), namespace)  # the saved file is exactly what runs
    return namespace["build"]()


# --------------------------------------------------------------------------------------------- metrics
def _clip(p: np.ndarray) -> np.ndarray:
    return np.clip(p, 1e-15, 1 - 1e-15)


def score(task: Task, y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Higher or lower is better as task.maximize says; y_* are 2-D for several targets or classes."""
    if task.metric == "accuracy":
        return float(np.mean(y_true == y_pred))
    if task.metric == "roc-auc":
        if len(np.unique(y_pred)) == 1:
            return 0.5  # a constant ranks nothing (and needs no scikit-learn, which may still be loading)
        from sklearn.metrics import roc_auc_score

        if y_true.ndim == 1:
            return float(roc_auc_score(y_true, y_pred))
        scored = [j for j in range(y_true.shape[1]) if len(np.unique(y_true[:, j])) == 2]
        return float(np.mean([roc_auc_score(y_true[:, j], y_pred[:, j]) for j in scored]))
    if task.metric == "log-loss":
        if y_true.ndim == 1:
            p = _clip(y_pred)
            return float(-np.mean(y_true * np.log(p) + (1 - y_true) * np.log(1 - p)))
        p = _clip(y_pred / y_pred.sum(axis=1, keepdims=True))
        return float(-np.mean(np.sum(y_true * np.log(p), axis=1)))
    errors = _regression_errors(task.metric, y_true.astype(float), y_pred.astype(float))
    return float(np.mean(errors))


def _regression_errors(metric: str, y_true: np.ndarray, y_pred: np.ndarray) -> list:
    y_true, y_pred = y_true.reshape(len(y_true), -1), y_pred.reshape(len(y_pred), -1)
    if metric == "mae":
        return list(np.mean(np.abs(y_true - y_pred), axis=0))
    if metric == "rmsle":
        y_true, y_pred = np.log1p(np.maximum(y_true, 0)), np.log1p(np.maximum(y_pred, 0))
    return list(np.sqrt(np.mean((y_true - y_pred) ** 2, axis=0)))


def better(task: Task, new: float, old: float | None) -> bool:
    if not math.isfinite(new):
        return False
    return old is None or (new > old if task.maximize else new < old)


# --------------------------------------------------------------------------------------------- fitting
class Model:
    """One candidate fitted for the task: one pipeline, or one per target for several regression targets."""

    def __init__(self, task: Task, source: str) -> None:
        self.task, self.source = task, source

    def fit(self, X: pd.DataFrame, y: np.ndarray) -> Model:
        columns = y.shape[1] if self.task.kind == "regression" and y.ndim == 2 else None
        if columns is None:
            self.pipelines = [build_pipeline(self.source).fit(X, y)]
        else:
            self.pipelines = [build_pipeline(self.source).fit(X, y[:, j]) for j in range(columns)]
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Labels (1-D), probabilities (1-D of the positive class, or 2-D by task.classes) or numbers."""
        kind = self.task.kind
        if kind == "regression":
            return np.column_stack([p.predict(X) for p in self.pipelines]).astype(float)
        pipeline = self.pipelines[0]
        if kind == "labels":
            return np.asarray(pipeline.predict(X), dtype=object)
        proba = pipeline.predict_proba(X)
        fitted = [str(c) for c in pipeline.classes_]
        full = np.zeros((len(X), len(self.task.classes)))
        for j, cls in enumerate(self.task.classes):
            if cls in fitted:
                full[:, j] = proba[:, fitted.index(cls)]
        if kind == "binary-probability":
            return full[:, self.task.classes.index(self.task.positive)]
        full = np.clip(full, 1e-6, 1.0)
        return full / full.sum(axis=1, keepdims=True)


def constant_predictions(task: Task, y: np.ndarray, rows: int) -> np.ndarray:
    """The majority class, the class frequencies or the mean, with numpy alone (before scikit-learn loads)."""
    if task.kind == "regression":
        return np.tile(np.nanmean(y.reshape(len(y), -1), axis=0), (rows, 1))
    counts = pd.Series(y).value_counts()
    if task.kind == "labels":
        majority = sorted(counts.index, key=lambda label: (-counts[label], label))[0]
        return np.asarray([majority] * rows, dtype=object)
    shares = np.asarray([counts.get(c, 0) for c in task.classes], dtype=float) / len(y)
    if task.kind == "binary-probability":
        return np.full(rows, shares[task.classes.index(task.positive)])
    shares = np.clip(shares, 1e-6, 1.0)
    return np.tile(shares / shares.sum(), (rows, 1))


def truth(task: Task, y: np.ndarray) -> np.ndarray:
    """The labels as the metric wants them: 0/1 of the positive class, one-hot over classes, or as they are."""
    if task.kind == "binary-probability":
        return (y == task.positive).astype(float)
    if task.kind == "class-probabilities":
        return (y[:, None] == np.asarray(task.classes, dtype=object)[None, :]).astype(float)
    return y


# --------------------------------------------------------------------------------------------- the agent
class OutOfTime(Exception):
    """The deadline passed while a candidate was still computing."""


class Agent:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args, self.start = args, time.monotonic()
        limit = args.time_limit
        self.deadline = self.start + limit - max(2.0, min(60.0, 0.1 * limit))
        self.seed, self.n_jobs = args.seed, args.n_jobs
        for folder in (args.submission_dir, args.logs_dir, args.code_dir):
            os.makedirs(folder, exist_ok=True)
        header = {"format": "medalboard-trajectory", "version": 1, "agent": AGENT, "model": "none (scikit-learn)",
                  "started_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),  # noqa: UP017 (3.9)
                  "seed": self.seed, "time_limit_s": limit}
        if args.competition:
            header["task"] = args.competition
        self.log = Trajectory(os.path.join(args.logs_dir, "trajectory.jsonl"), header, self.start)
        self.best: float | None = None
        self.submissions = 0
        self.cv_seconds = 0.0

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    # ----------------------------------------------------------------------------- reading
    def load(self) -> None:
        data = self.args.data_dir
        self.sample_path = os.path.join(data, "sample_submission.csv")  # the format every submission is checked by
        self.sample = pd.read_csv(self.sample_path, dtype=str, keep_default_na=False)
        path = os.path.join(data, "description.md")
        self.description = open(path, encoding="utf-8", errors="replace").read() if os.path.isfile(path) else ""
        self.read_data(os.path.join(data, "train.csv"), os.path.join(data, "test.csv"))

    def read_data(self, train_path: str, test_path: str) -> None:
        id_column = self.sample.columns[0]
        self.train = pd.read_csv(train_path, dtype={id_column: str}, low_memory=False)
        self.test = pd.read_csv(test_path, dtype={id_column: str}, low_memory=False)
        # Labels as the file spells them, so they are written back exactly (True stays True, 01 stays 01).
        self.train_raw = pd.read_csv(train_path, dtype=str, keep_default_na=False,
                                     usecols=[c for c in self.train.columns if c not in self.test.columns
                                              or c in self.sample.columns[1:]])

    def understand(self) -> None:
        self.task = infer_task(self.train_raw, list(self.test.columns), self.sample, self.description)
        labelled = ~np.any([_is_missing(self.train_raw[c]).to_numpy() for c in self.task.source], axis=0)
        self.labelled_rows = np.flatnonzero(labelled)  # self.X's rows, as rows of self.train
        self.features = choose_features(self.train, self.test, self.task)
        self.X = feature_frame(self.train[labelled].reset_index(drop=True), self.features)
        self.y = self._target(self.train_raw[labelled].reset_index(drop=True))
        self.X_test = feature_frame(self.test, self.features)
        rng = np.random.RandomState(self.seed)
        self.cv_rows = np.sort(rng.permutation(len(self.X))[:CV_MAX_ROWS])
        self.fit_rows = np.sort(rng.permutation(len(self.X))[:FIT_MAX_ROWS])
        described = f"description.md: {len(self.description)} characters" if self.description else "no description.md"
        self.log.step("plan", "Read the data and infer the task", "\n".join([
            f"train.csv: {len(self.train)} rows x {len(self.train.columns)} columns ({int(labelled.sum())} labelled); "
            f"test.csv: {len(self.test)} rows; sample_submission.csv: {len(self.sample)} rows; {described}.",
            "Task: " + self.task.describe() + ".",
            "Features: " + self.features.describe() + ".",
            f"Plan: a trivial model first, then cross-validate scikit-learn candidates cheapest first within "
            f"{max(0.0, self.remaining()):.0f} s, rewriting the submission whenever the validation score improves.",
        ]))

    def _target(self, raw: pd.DataFrame) -> np.ndarray:
        if self.task.kind == "regression":
            numbers = raw[self.task.source].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
            return numbers[:, 0] if numbers.shape[1] == 1 else numbers
        return np.asarray([str(v) for v in raw[self.task.source[0]].tolist()], dtype=object)

    # ----------------------------------------------------------------------------- search
    def folds(self) -> list:
        from sklearn.model_selection import KFold, StratifiedKFold

        n = len(self.cv_rows)
        k = 5 if n <= 20_000 else 3
        y = self.y[self.cv_rows]
        if self.task.kind != "regression":
            counts = pd.Series(y).value_counts()
            if counts.min() >= k:
                return list(StratifiedKFold(k, shuffle=True, random_state=self.seed).split(np.zeros(n), y))
        return list(KFold(min(k, n), shuffle=True, random_state=self.seed).split(np.zeros(n)))

    def run(self) -> int:
        self.load()
        self.understand()
        self.constant()
        candidates = REGRESSORS if self.task.kind == "regression" else CLASSIFIERS
        folds = self.folds()
        for number, candidate in enumerate(candidates, start=1):
            if self.remaining() < 1.0:
                self.log.step("message", "Time budget spent", f"{len(candidates) - number + 1} candidates not tried.",
                              {"role": "system"})
                break
            try:
                self.try_candidate(number, candidate, folds)
            except OutOfTime:
                self.log.step("message", "Time budget spent", f"{candidate.name} was stopped unfinished; "
                              f"{len(candidates) - number} candidates not tried.", {"role": "system"})
                break
        self.log.step("message", "Done", f"best validation {self.task.metric}: {self.best}; "
                      f"{self.submissions} submissions written.", {"role": "system"})
        return 0 if self.submissions else 1

    def constant(self) -> None:
        """The floor: a constant prediction, scored and submitted with numpy alone, within seconds."""
        self.log.step("plan", "Candidate 0: a constant", "Predict the training targets' majority class, class "
                      "frequencies or mean, so that a valid submission exists before any model is fitted.")
        value = score(self.task, truth(self.task, self.y), constant_predictions(self.task, self.y, len(self.y)))
        self.log.step("score", f"validation {self.task.metric} = {value:.6g}", "",
                      {"metric": self.task.metric, "value": value, "maximize": self.task.maximize,
                       "candidate": "constant", "validation": "training rows (a constant learns nothing to overfit)"},
                      score=value)
        if self.submit(constant_predictions(self.task, self.y, len(self.X_test)), "a constant", len(self.y)):
            self.best = value

    def try_candidate(self, number: int, candidate: Candidate, folds: list) -> None:
        title = f"Candidate {number}: {candidate.name}"
        self.log.step("plan", title, f"Try {candidate.name}: {candidate.why}.")
        source = candidate.source(self.features, self.seed, self.n_jobs, title)
        path = os.path.join(self.args.code_dir, f"candidate_{number:02d}_{candidate.name}.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        self.log.step("code", os.path.basename(path), "", {"file": path, "content": source, "diff": ""})
        command = f"cross-validate {os.path.basename(path)} ({len(folds)} folds, {len(self.cv_rows)} rows)"
        began = time.monotonic()
        try:
            outcome = self.bounded(lambda: self.evaluate(source, folds))
        except OutOfTime:
            self._command(command, ["stopped: the time budget ran out"], 124, began)
            raise
        except Exception as exc:  # noqa: BLE001 - a failing candidate is logged and the search goes on
            self.log.step("error", f"{candidate.name} failed: {type(exc).__name__}", str(exc), {
                "message": str(exc), "type": type(exc).__name__,
                "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))})
            return
        value, lines, predictions, rows = outcome
        self._command(command, lines, 0 if value is not None else 1, began)
        if value is None:
            return
        self.log.step("score", f"validation {self.task.metric} = {value:.6g}", "",
                      {"metric": self.task.metric, "value": value, "maximize": self.task.maximize,
                       "candidate": candidate.name, "validation": "cross-validation"}, score=value)
        if predictions is not None and self.submit(predictions, candidate.name, rows):
            self.best = value

    def _command(self, command: str, lines: list, exit_code: int, began: float) -> None:
        stdout = "\n".join(lines)
        self.log.step("command", command, stdout, {"command": command, "stdout": stdout, "stderr": "",
                                                   "exit_code": exit_code,
                                                   "duration": round(time.monotonic() - began, 3)})

    def bounded(self, work):
        """Run work in a thread and wait at most until the deadline: a slow fit cannot overrun the budget.
        An abandoned thread only computes; it never writes files, and the process exits without it."""
        result: dict = {}

        def target() -> None:
            try:
                result["value"] = work()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                result["error"] = exc

        worker = threading.Thread(target=target, daemon=True)
        worker.start()
        worker.join(max(0.1, self.remaining()))
        if worker.is_alive():
            raise OutOfTime()
        if "error" in result:
            raise result["error"]
        return result["value"]

    def evaluate(self, source: str, folds: list) -> tuple:
        """(validation score or None, log lines, test predictions if it beats the best so far, rows fitted)."""
        value, lines = self.cross_validate(source, folds)
        if value is None or not better(self.task, value, self.best):
            return value, lines, None, 0
        rows = self.fit_rows
        if len(rows) > len(self.cv_rows) and self.cv_seconds * len(rows) / len(self.cv_rows) > self.remaining():
            rows = self.cv_rows  # no time to refit on more rows: the validated sample will do
        model = Model(self.task, source).fit(self.X.iloc[rows], self.y[rows])
        return value, lines, model.predict(self.X_test), len(rows)

    def cross_validate(self, source: str, folds: list) -> tuple[float | None, list]:
        """Out-of-fold score; when time runs short, on the folds done so far (the log says how many)."""
        X, y = self.X.iloc[self.cv_rows].reset_index(drop=True), self.y[self.cv_rows]
        predictions, done, lines, began = None, np.zeros(len(y), dtype=bool), [], time.monotonic()
        for k, (fit, held) in enumerate(folds, start=1):
            fold = Model(self.task, source).fit(X.iloc[fit], y[fit]).predict(X.iloc[held])
            if predictions is None:
                predictions = np.zeros((len(y), *fold.shape[1:]), dtype=fold.dtype)
            predictions[held], done[held] = fold, True
            per_fold = (time.monotonic() - began) / k
            lines.append(f"fold {k}/{len(folds)}: {per_fold * k:.2f} s elapsed")
            if k < len(folds) and per_fold * (len(folds) - k + 1.5) > self.remaining():
                lines.append(f"time is short: validating on the {k} of {len(folds)} folds done")
                break
        self.cv_seconds = time.monotonic() - began
        if predictions.ndim == 2 and predictions.shape[1] == 1:
            predictions = predictions[:, 0]
        value = score(self.task, truth(self.task, y[done]), predictions[done])
        lines.append(f"{self.task.metric} = {value:.6f} on out-of-fold predictions of {int(done.sum())} rows")
        return value, lines

    # ----------------------------------------------------------------------------- submitting
    def submit(self, predictions: np.ndarray, name: str, rows: int) -> bool:
        frame = self.submission_frame(predictions)
        target = os.path.join(self.args.submission_dir, "submission.csv")
        temporary = os.path.join(self.args.submission_dir, f".submission.{os.getpid()}.tmp")
        frame.to_csv(temporary, index=False)
        verdict = self.check(temporary)
        if not verdict.get("valid"):
            os.remove(temporary)
            self.log.step("error", "The format check rejected the submission", "\n".join(verdict.get("errors", [])),
                          {"message": "; ".join(verdict.get("errors", [])), "type": "InvalidSubmission"})
            return False
        os.replace(temporary, target)  # atomic: a reader sees the old file or the new one, never half
        self.submissions += 1
        self.log.step("submission", f"submission.csv from {name}", f"{len(frame)} rows; {name} fitted on "
                      f"{rows} training rows", {"file": target, "candidate": name})
        return True

    def submission_frame(self, predictions: np.ndarray) -> pd.DataFrame:
        task, ids = self.task, self.sample[self.task.id_column]
        if task.kind == "labels" and task.spelling:
            predictions = np.asarray([task.spelling.get(p, p) for p in predictions], dtype=object)
        values = predictions.reshape(len(predictions), -1)
        if task.kind == "class-probabilities":
            values = values[:, [task.classes.index(task.column_class[t]) for t in task.targets]]
        table = pd.DataFrame(values, columns=task.targets)
        if task.id_column in self.test.columns:
            table.index = self.test[task.id_column].astype(str).tolist()
            table = table[~table.index.duplicated()].reindex(ids.tolist())
            if table.isna().any().any():
                raise ValueError(f"test.csv has no row for {int(table.isna().any(axis=1).sum())} sample ids")
        elif len(table) != len(ids):
            raise ValueError("test.csv has no id column and a different row count from the sample submission")
        table.insert(0, task.id_column, ids.tolist())
        return table.reset_index(drop=True)

    def check(self, path: str) -> dict:
        checker = os.path.join(self.args.tools_dir, "check_submission.py")
        if not os.path.isfile(checker):
            checker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_submission.py")
        command = [sys.executable, checker, path, "--sample", self.sample_path]
        began = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True)
        self.log.step("command", "check_submission.py", done.stdout, {
            "command": " ".join(command), "stdout": done.stdout, "stderr": done.stderr[-4000:],
            "exit_code": done.returncode, "duration": round(time.monotonic() - began, 3)})
        try:
            return json.loads(done.stdout)
        except ValueError:
            return {"valid": False, "errors": [f"the checker failed: {done.stderr[-500:]}"]}


# --------------------------------------------------------------------------------------------- entry point
def parse_args(argv: list | None = None) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(description="Medalboard's baseline agent (scikit-learn, no LLM).")
    parser.add_argument("--data-dir", default=env("DATA_DIR", "/home/data"))
    parser.add_argument("--submission-dir", default=env("SUBMISSION_DIR", "/home/submission"))
    parser.add_argument("--logs-dir", default=env("LOGS_DIR", "/home/logs"))
    parser.add_argument("--code-dir", default=env("CODE_DIR", "/home/code"))
    parser.add_argument("--tools-dir", default=env("TOOLS_DIR", os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--time-limit", type=float, default=float(env("TIME_LIMIT_SECONDS", "3600")),
                        help="seconds; the agent keeps a safety margin of 10%% (2 s to 60 s)")
    parser.add_argument("--seed", type=int, default=int(env("SEED", "0")))
    parser.add_argument("--n-jobs", type=int, default=int(THREADS))
    parser.add_argument("--competition", default=env("COMPETITION_ID", ""))
    parser.add_argument("--task-kind", default=env("TASK_KIND", "mle-bench"), choices=["mle-bench", "research"],
                        help="research: an MLAgentBench task, its workspace the current directory (research_mode.py)")
    parser.add_argument("--workspace-dir", default=env("WORKSPACE_DIR", os.getcwd()))
    parser.add_argument("--research-problem", default=env("RESEARCH_PROBLEM", ""),
                        help="research: the file with the research problem's text")
    return parser.parse_args(argv)


def make_agent(args: argparse.Namespace) -> Agent:
    if args.task_kind == "research":
        from research_mode import ResearchAgent  # beside this file; it builds on this module

        return ResearchAgent(args)
    return Agent(args)


def _stop(signum, frame):
    raise SystemExit(128 + signum)


def main(argv: list | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    agent = make_agent(args)
    try:
        return agent.run()
    except SystemExit:
        agent.log.step("message", "Stopped by the runner", "SIGTERM: the last submission written stands.",
                       {"role": "system"})
        return 0 if agent.submissions else 1
    except Exception as exc:  # noqa: BLE001 - the trajectory says why the agent gave up
        agent.log.step("error", f"The agent failed: {type(exc).__name__}", str(exc),
                       {"message": str(exc), "type": type(exc).__name__, "traceback": traceback.format_exc()})
        print(f"baseline agent failed: {exc}", file=sys.stderr)
        return 0 if agent.submissions else 1


if __name__ == "__main__":
    sys.modules.setdefault("baseline_agent", sys.modules[__name__])  # research_mode imports this very module
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # without waiting for a candidate thread abandoned at the deadline

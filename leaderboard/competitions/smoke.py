"""Smoke competitions: four small competitions built from data sets that ship inside scikit-learn.

They exist so a new site can run a real job end to end in seconds (the baseline agent, a sandbox,
grading, medals). Each is written in MLE-bench's prepared layout under one root:

    <root>/competitions/<id>/{config.yaml, description.md, leaderboard.csv}   (the catalogue)
    <root>/splits/smoke.txt
    <root>/data/<id>/prepared/public/{train.csv, test.csv, sample_submission.csv, description.md}
    <root>/data/<id>/prepared/private/answers.csv

and imported like any catalogue (`import_catalogue(root, data_dir=root / "data")`). Their configs name
a grader the metric registry knows and no MLE-bench grade_fn, so they are graded by the generic grader
(leaderboard/grading/generic.py). Their leaderboards are REFERENCE leaderboards: simple scikit-learn
baselines trained on the train split and scored on the answers with the registry's own metric, never
Kaggle humans (`leaderboard_kind: reference`). Everything is derived deterministically from the bundled
data, so building twice writes the same bytes (files are only rewritten when their content differs).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from sklearn import datasets
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from leaderboard.grading.generic import registry_metric
from leaderboard.grading.metrics import get_metric
from leaderboard.lib.files import write_if_changed

SPLIT = "smoke"
ID = "id"
TEST_SHARE = 0.25
SPLIT_SEED = 0
REFERENCE_NOTE = ("Its leaderboard is a reference leaderboard of simple scikit-learn baselines trained on "
                  "train.csv, not Kaggle humans.")


@dataclass(frozen=True)
class Frame:
    features: pd.DataFrame
    target: pd.Series  # class labels (text) or numbers


@dataclass(frozen=True)
class SmokeCompetition:
    slug: str
    name: str
    grader: str  # grader.name as MLE-bench configs spell it; the registry alias resolves it
    kind: str  # "labels", "probability" (of one class), "class-probabilities" (a column per class), "regression"
    load: Callable[[], Frame]
    about: str
    positive: str = ""  # "probability": the class whose probability is predicted


def _wine() -> Frame:
    data = datasets.load_wine(as_frame=True)
    labels = data.target.map(lambda k: f"cultivar_{k}")
    return Frame(data.data, labels.rename("cultivar"))


def _breast_cancer() -> Frame:
    data = datasets.load_breast_cancer(as_frame=True)
    malignant = (data.target == 0).astype(int)  # scikit-learn codes malignant as 0, benign as 1
    return Frame(data.data, malignant.rename("malignant"))


def _diabetes() -> Frame:
    """Raw (unscaled) diabetes data made messier, deterministically: categories and missing values."""
    data = datasets.load_diabetes(as_frame=True, scaled=False)
    features = data.data.copy()
    row = np.arange(len(features))
    features["sex"] = features["sex"].map({1.0: "A", 2.0: "B"}).astype(object)
    features["age_band"] = pd.cut(features["age"], [0, 30, 45, 60, 200], right=False,
                                  labels=["under-30", "30-44", "45-59", "60-plus"]).astype(object)
    features.loc[row % 10 == 3, "bmi"] = np.nan
    features.loc[row % 7 == 2, "bp"] = np.nan
    features.loc[row % 13 == 5, "sex"] = np.nan
    features.loc[row % 11 == 4, "age_band"] = np.nan
    return Frame(features, data.target.rename("progression"))


def _digits() -> Frame:
    data = datasets.load_digits(as_frame=True)
    return Frame(data.data, data.target.astype(str).rename("digit"))


COMPETITIONS: tuple[SmokeCompetition, ...] = (
    SmokeCompetition(
        "smoke-wine", "Smoke: wine cultivars", "accuracy", "labels", _wine,
        "Predict the cultivar (`cultivar_0`, `cultivar_1` or `cultivar_2`) of a wine from 13 chemical "
        "measurements (scikit-learn's wine data set, 178 wines). Metric: accuracy of the `cultivar` column."),
    SmokeCompetition(
        "smoke-breast-cancer", "Smoke: breast cancer diagnosis", "auc-roc", "probability", _breast_cancer,
        "Predict the probability that a breast mass is malignant from 30 features of a digitised image "
        "(scikit-learn's breast cancer Wisconsin data set, 569 cases). train.csv has `malignant` (1 = "
        "malignant, 0 = benign); submit the probability of malignant in the `malignant` column. Metric: "
        "ROC AUC.", positive="1"),
    SmokeCompetition(
        "smoke-diabetes", "Smoke: diabetes progression", "root-mean-squared-error", "regression", _diabetes,
        "Predict `progression`, a quantitative measure of disease progression one year after baseline, "
        "from age, sex, body mass index (`bmi`), blood pressure (`bp`) and six blood serum measurements "
        "`s1`-`s6` (scikit-learn's diabetes data set, 442 patients, unscaled). To exercise categorical and "
        "missing-value handling the data was altered deterministically: `sex` (coded 1/2 in the source, "
        "which is which is not documented) is the category `A`/`B`; `age_band` is a category derived from "
        "`age` (`under-30`, `30-44`, `45-59`, `60-plus`); and some cells are empty on purpose: `bmi` in "
        "rows 3, 13, 23, ... (every 10th), `bp` in rows 2, 9, 16, ... (every 7th), `sex` in every 13th row "
        "from row 5, `age_band` in every 11th row from row 4 (row numbers of the source data, from 0). "
        "Metric: root mean squared error."),
    SmokeCompetition(
        "smoke-digits", "Smoke: handwritten digits", "multi-class-log-loss", "class-probabilities", _digits,
        "Recognise handwritten digits from 8x8 images given as 64 pixel intensities `pixel_0_0` ... "
        "`pixel_7_7` (scikit-learn's digits data set, 1,797 images). train.csv has the label `digit` "
        "(0-9); submit one probability per class in the columns `digit_0` ... `digit_9`, each row summing "
        "to 1. Metric: multi-class log loss."),
)


# --------------------------------------------------------------------------------------------- splitting
@dataclass
class Prepared:
    train: pd.DataFrame
    test: pd.DataFrame
    sample: pd.DataFrame
    answers: pd.DataFrame
    y_train: pd.Series
    y_test: pd.Series


def prepare(competition: SmokeCompetition) -> Prepared:
    frame = competition.load()
    ids = pd.Series([f"{competition.slug.removeprefix('smoke-')}-{i:05d}" for i in range(len(frame.target))],
                    name=ID)
    stratify = None if competition.kind == "regression" else frame.target
    train_rows, test_rows = train_test_split(np.arange(len(ids)), test_size=TEST_SHARE, random_state=SPLIT_SEED,
                                             stratify=stratify)
    train_rows, test_rows = np.sort(train_rows), np.sort(test_rows)
    features = pd.concat([ids, frame.features.reset_index(drop=True)], axis=1)
    target = frame.target.reset_index(drop=True)
    train = features.iloc[train_rows].assign(**{target.name: target.iloc[train_rows].to_numpy()})
    test = features.iloc[test_rows].reset_index(drop=True)
    y_test = target.iloc[test_rows].reset_index(drop=True)
    return Prepared(train.reset_index(drop=True), test, _sample(competition, test, target),
                    _answers(competition, test, y_test, target), target.iloc[train_rows].reset_index(drop=True),
                    y_test)


def _class_columns(competition: SmokeCompetition, target: pd.Series) -> list[str]:
    return [f"{target.name}_{c}" for c in sorted(target.unique(), key=lambda c: (len(str(c)), str(c)))]


def _sample(competition: SmokeCompetition, test: pd.DataFrame, target: pd.Series) -> pd.DataFrame:
    sample = pd.DataFrame({ID: test[ID]})
    if competition.kind == "class-probabilities":
        columns = _class_columns(competition, target)
        for column in columns:
            sample[column] = round(1 / len(columns), 6)
    elif competition.kind == "probability":
        sample[target.name] = 0.5
    elif competition.kind == "regression":
        sample[target.name] = 0.0
    else:
        sample[target.name] = sorted(target.unique())[0]
    return sample


def _answers(competition: SmokeCompetition, test: pd.DataFrame, y_test: pd.Series, target: pd.Series) -> pd.DataFrame:
    answers = pd.DataFrame({ID: test[ID]})
    if competition.kind == "class-probabilities":
        for column in _class_columns(competition, target):
            answers[column] = (y_test.astype(str) == column.removeprefix(f"{target.name}_")).astype(int)
    else:
        answers[target.name] = y_test.to_numpy()
    return answers


# --------------------------------------------------------------------------------------------- reference
def _baselines(kind: str) -> list[tuple[str, object]]:
    if kind == "regression":
        return [("mean", DummyRegressor()), ("median", DummyRegressor(strategy="median")),
                *[(f"ridge alpha={a}", Ridge(alpha=a)) for a in (0.1, 1.0, 10.0, 100.0)],
                *[(f"tree depth={d} seed={s}", DecisionTreeRegressor(max_depth=d, random_state=s))
                  for d in (2, 4, 8) for s in (0, 1)],
                *[(f"forest n={n} seed={s}", RandomForestRegressor(n_estimators=n, random_state=s))
                  for n in (10, 50) for s in (0, 1, 2)],
                *[(f"knn k={k}", KNeighborsRegressor(n_neighbors=k)) for k in (1, 5, 15)]]
    return [("prior", DummyClassifier(strategy="prior")), ("uniform", DummyClassifier(strategy="uniform",
                                                                                      random_state=0)),
            *[(f"logistic C={c}", LogisticRegression(C=c, max_iter=5000)) for c in (0.01, 0.1, 1.0, 10.0)],
            *[(f"tree depth={d} seed={s}", DecisionTreeClassifier(max_depth=d, random_state=s))
              for d in (1, 2, 4, 8) for s in (0, 1)],
            *[(f"forest n={n} seed={s}", RandomForestClassifier(n_estimators=n, random_state=s))
              for n in (5, 50) for s in (0, 1, 2)],
            *[(f"knn k={k}", KNeighborsClassifier(n_neighbors=k)) for k in (1, 5, 15)],
            ("naive bayes", GaussianNB())]


def _features(train: pd.DataFrame) -> ColumnTransformer:
    numeric = [c for c in train.columns if c != ID and pd.api.types.is_numeric_dtype(train[c])]
    categorical = [c for c in train.columns if c != ID and c not in numeric]
    return ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric),
        ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder(handle_unknown="ignore")),
         categorical),
    ], sparse_threshold=0)


def _predict(competition: SmokeCompetition, model, prepared: Prepared) -> np.ndarray:
    X_train, X_test = prepared.train.drop(columns=[prepared.y_train.name]), prepared.test
    pipeline = make_pipeline(_features(X_train), clone(model)).fit(X_train, prepared.y_train)
    if competition.kind == "regression" or competition.kind == "labels":
        return pipeline.predict(X_test)
    proba = pipeline.predict_proba(X_test)
    classes = [str(c) for c in pipeline.classes_]
    if competition.kind == "probability":
        return proba[:, classes.index(competition.positive)]
    columns = [c for c in prepared.answers.columns if c != ID]
    order = [classes.index(c.removeprefix(f"{prepared.y_train.name}_")) for c in columns]
    return proba[:, order]


def reference_leaderboard(competition: SmokeCompetition, prepared: Prepared) -> list[tuple[str, float]]:
    """(baseline, score) best first, scored on the answers with the metric registry's function."""
    metric = get_metric(registry_metric(competition.grader))
    truth = prepared.answers.drop(columns=[ID]).to_numpy()
    y_true = truth[:, 0] if truth.shape[1] == 1 else truth
    if competition.kind == "labels":
        y_true = y_true.astype(str).astype(object)
    scores = []
    for name, model in _baselines("regression" if competition.kind == "regression" else "classification"):
        y_pred = _predict(competition, model, prepared)
        if competition.kind == "labels":
            y_pred = y_pred.astype(str).astype(object)
        scores.append((name, float(metric.fn(y_true, y_pred))))
    scores.sort(key=lambda item: item[1], reverse=not metric.lower_is_better)
    return scores


# --------------------------------------------------------------------------------------------- writing
def _csv(frame: pd.DataFrame) -> str:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, lineterminator="\n", float_format="%.10g")
    return buffer.getvalue()


def _config(competition: SmokeCompetition) -> str:
    config = {
        "id": competition.slug, "name": competition.name, "competition_type": "smoke", "awards_medals": False,
        "prizes": None, "description": "description.md", "leaderboard_kind": "reference",
        "dataset": {"answers": f"{competition.slug}/prepared/private/answers.csv",
                    "sample_submission": f"{competition.slug}/prepared/public/sample_submission.csv"},
        "grader": {"name": competition.grader},
    }
    return yaml.safe_dump(config, sort_keys=False)


def _description(competition: SmokeCompetition, target: str) -> str:
    return (f"# {competition.name}\n\n{competition.about}\n\nFiles: `train.csv` (features, `{ID}` and `{target}`), "
            f"`test.csv` (features and `{ID}`), `sample_submission.csv` (the submission's columns and ids). "
            f"A smoke competition made by Medalboard from a data set that ships with scikit-learn "
            f"({int((1 - TEST_SHARE) * 100)}/{int(TEST_SHARE * 100)} split, seed {SPLIT_SEED}). "
            f"{REFERENCE_NOTE}\n")


def build_competition(competition: SmokeCompetition, root: Path) -> int:
    """Write one competition's catalogue and data files; how many files changed."""
    prepared = prepare(competition)
    leaderboard = reference_leaderboard(competition, prepared)
    description = _description(competition, prepared.y_train.name)
    catalogue = root / "competitions" / competition.slug
    data = root / "data" / competition.slug / "prepared"
    files = {
        catalogue / "config.yaml": _config(competition),
        catalogue / "description.md": description,
        catalogue / "leaderboard.csv": _csv(pd.DataFrame({"rank": range(1, len(leaderboard) + 1),
                                                          "score": [s for _, s in leaderboard],
                                                          "baseline": [n for n, _ in leaderboard]})),
        data / "public" / "train.csv": _csv(prepared.train),
        data / "public" / "test.csv": _csv(prepared.test),
        data / "public" / "sample_submission.csv": _csv(prepared.sample),
        data / "public" / "description.md": description,
        data / "private" / "answers.csv": _csv(prepared.answers),
    }
    return sum(write_if_changed(path, text) for path, text in files.items())


def build(root: Path) -> int:
    """Write every smoke competition and the smoke split under root; how many files changed."""
    root = Path(root)
    changed = sum(build_competition(c, root) for c in COMPETITIONS)
    return changed + write_if_changed(root / "splits" / f"{SPLIT}.txt", "".join(f"{c.slug}\n" for c in COMPETITIONS))

"""Custom competitions: a folder in MLE-bench's layout whose config names a known metric is graded by the
generic grader (id = first sample column, targets = the rest), with numbers checked against scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error

from leaderboard.competitions.catalogue import import_catalogue
from leaderboard.grading import grade_submission, grader_for, grading_available
from leaderboard.grading.specs import SPECS
from leaderboard.models import Competition

pytestmark = pytest.mark.django_db


def make_competition(root, slug: str, metric: str, answers: pd.DataFrame, sample: pd.DataFrame, **config) -> None:
    """A catalogue folder (root/catalogue/<slug>) and a data root (root/data/<slug>/prepared/...)."""
    folder = root / "catalogue" / slug
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(yaml.safe_dump({
        "id": slug, "name": slug.title(), "competition_type": "custom", "awards_medals": False,
        "dataset": {"answers": f"{slug}/prepared/private/answers.csv",
                    "sample_submission": f"{slug}/prepared/public/sample_submission.csv"},
        "grader": {"name": metric}, **config}))
    (folder / "description.md").write_text(f"# {slug}\n")
    (folder / "leaderboard.csv").write_text("rank,score\n1,0.9\n2,0.8\n3,0.7\n4,0.6\n")
    prepared = root / "data" / slug / "prepared"
    (prepared / "public").mkdir(parents=True)
    (prepared / "private").mkdir(parents=True)
    sample.to_csv(prepared / "public" / "sample_submission.csv", index=False)
    answers.to_csv(prepared / "private" / "answers.csv", index=False)


def imported(root, slug: str) -> Competition:
    import_catalogue(root / "catalogue", data_dir=root / "data")
    return Competition.objects.get(slug=slug)


def grade(tmp_path, competition: Competition, submission: pd.DataFrame):
    path = tmp_path / "submission.csv"
    submission.to_csv(path, index=False)
    return grade_submission(competition, path)


@pytest.fixture
def labels(tmp_path):
    rng = np.random.RandomState(1)
    ids = [f"q{i}" for i in rng.permutation(200)]
    truth = rng.choice(["cat", "dog", "eel"], size=200)
    answers = pd.DataFrame({"query": ids, "animal": truth})
    make_competition(tmp_path, "pet-guess", "accuracy", answers, pd.DataFrame({"query": ids, "animal": "cat"}))
    return answers


def test_accuracy_competition_is_graded_with_the_right_number(tmp_path, labels):
    competition = imported(tmp_path, "pet-guess")
    spec = grader_for(competition)
    assert (spec.id_column, spec.target_columns, spec.metric, spec.source) == ("query", ("animal",), "accuracy",
                                                                                  "generic")
    rng = np.random.RandomState(2)
    guess = np.where(rng.rand(200) < 0.6, labels["animal"], rng.choice(["cat", "dog", "eel"], size=200))
    submission = pd.DataFrame({"query": labels["query"], "animal": guess}).sample(frac=1, random_state=3)
    report = grade(tmp_path, competition, submission)
    assert report.valid_submission, report.error
    assert report.score == pytest.approx(accuracy_score(labels["animal"], guess), abs=1e-5)
    assert any("generic grader" in note for note in report.notes)


def test_wrong_columns_are_rejected_with_a_clear_message(tmp_path, labels):
    competition = imported(tmp_path, "pet-guess")
    report = grade(tmp_path, competition, pd.DataFrame({"query": labels["query"], "species": "cat"}))
    assert not report.valid_submission and report.grading_available
    assert report.error.startswith("invalid submission") and "animal" in report.error
    report = grade(tmp_path, competition, pd.DataFrame({"id": labels["query"], "animal": "cat"}))
    assert not report.valid_submission and "query" in report.error


def test_missing_ids_are_rejected(tmp_path, labels):
    competition = imported(tmp_path, "pet-guess")
    report = grade(tmp_path, competition, labels.iloc[:150])
    assert not report.valid_submission and "missing" in report.error


def test_regression_with_mle_bench_metric_spelling(tmp_path):
    rng = np.random.RandomState(4)
    answers = pd.DataFrame({"house": np.arange(100), "price": rng.gamma(3, 50_000, size=100)})
    make_competition(tmp_path, "house-prices-mini", "root-mean-squared-error", answers,
                     answers.assign(price=0.0))
    competition = imported(tmp_path, "house-prices-mini")
    predicted = answers["price"] * rng.uniform(0.8, 1.2, size=100)
    report = grade(tmp_path, competition, answers.assign(price=predicted))
    assert report.valid_submission and report.is_lower_better
    assert report.score == pytest.approx(math.sqrt(mean_squared_error(answers["price"], predicted)), rel=1e-6)


def test_class_probability_columns(tmp_path):
    rng = np.random.RandomState(5)
    classes = ["red", "green", "blue"]
    truth = rng.randint(0, 3, size=120)
    answers = pd.DataFrame({"id": np.arange(120), **{c: (truth == k).astype(int) for k, c in enumerate(classes)}})
    make_competition(tmp_path, "colours", "multi-class-log-loss", answers, answers.assign(red=1, green=0, blue=0))
    competition = imported(tmp_path, "colours")
    proba = rng.dirichlet([1, 1, 1], size=120)
    report = grade(tmp_path, competition, pd.DataFrame({"id": np.arange(120), **dict(zip(classes, proba.T,
                                                                                         strict=True))}))
    assert report.valid_submission, report.error
    assert report.score == pytest.approx(log_loss(truth, proba, labels=[0, 1, 2]), rel=1e-5)
    bad = pd.DataFrame({"id": np.arange(120), "red": 0.9, "green": 0.9, "blue": 0.9})
    assert "sum" in grade(tmp_path, competition, bad).error


def test_unknown_metric_is_not_graded(tmp_path, client):
    answers = pd.DataFrame({"id": [1, 2], "y": [0, 1]})
    make_competition(tmp_path, "odd-metric", "my-secret-sauce", answers, answers)
    competition = imported(tmp_path, "odd-metric")
    assert grader_for(competition) is None and not grading_available(competition)
    assert grade(tmp_path, competition, answers).grading_available is False
    assert "Grading not available" in client.get("/competitions/odd-metric/").content.decode()


def test_mle_bench_competitions_are_graded_by_their_own_spec(catalogue):
    """Every MLE-bench competition has a spec read from its grade.py; the generic grader never replaces it."""
    mle_bench = list(Competition.objects.filter(benchmark__slug="mle-bench"))
    assert mle_bench and all(grader_for(c) is SPECS[c.slug] for c in mle_bench if c.slug in SPECS)


def test_config_copied_from_mle_bench_template_gets_the_generic_grader(tmp_path, labels, client):
    """A custom competition whose config names MLE-bench's grade_fn (as every MLE-bench config does, so
    users copy it) is still custom: the product has no spec for it, so the generic grader scores it."""
    answers = labels
    make_competition(tmp_path, "pet-template", "accuracy", answers, answers.assign(animal="cat"),
                     grader={"name": "accuracy", "grade_fn": "mlebench.competitions.pet-template.grade:grade"})
    competition = imported(tmp_path, "pet-template")
    assert grader_for(competition).source == "generic" and grading_available(competition)
    guess = answers.assign(animal=np.where(np.arange(len(answers)) % 3 == 0, "cat", answers["animal"]))
    report = grade(tmp_path, competition, guess)
    assert report.valid_submission, report.error
    assert report.score == pytest.approx(accuracy_score(answers["animal"], guess["animal"]))
    assert report.grader.startswith("generic grader") and "accuracy" in report.grader
    assert any("does not run" in note for note in report.notes)
    assert competition.leaderboard_kind == "reference"  # not Kaggle's humans: the product knows no such competition


def test_report_names_the_mle_bench_grader(catalogue, tmp_path):
    report = grade_submission(catalogue.get(slug="spaceship-titanic"), tmp_path / "missing.csv")
    assert report.grader.startswith("MLE-bench grader of spaceship-titanic")


def test_competition_page_describes_the_generic_grader(tmp_path, labels, client):
    imported(tmp_path, "pet-guess")
    page = client.get("/competitions/pet-guess/").content.decode()
    assert "by the generic grader" in page and "<code>query</code>" in page
    body = client.get("/api/competitions/pet-guess/").json()
    assert body["grading_available"] is True and body["public_data_registered"] is True
    assert str(tmp_path) not in str(body)  # no path of the data root, public or private


def test_config_spellings_resolve_to_registry_metrics():
    from leaderboard.grading.generic import CONFIG_NAMES, VALUE_TYPES, registry_metric
    from leaderboard.grading.metrics import METRICS

    assert set(CONFIG_NAMES.values()) <= set(METRICS) and set(VALUE_TYPES) <= set(METRICS)
    assert registry_metric("auc-roc") == "roc-auc" and registry_metric(" Root-Mean-Squared-Error ") == "rmse"
    assert registry_metric("dice-hausdorff-combo") is None and registry_metric("") is None
    assert registry_metric("F1-Score") == "f1" and registry_metric("macro-f1-score") == "f1-macro"


def _map_at_5(truth: list[str], guesses: list[str]) -> float:
    """Kaggle's MAP@5 with one true label per row, written out here: 1/rank of the first hit in the top 5."""
    total = 0.0
    for answer, guess in zip(truth, guesses, strict=True):
        ranked = list(dict.fromkeys(guess.split()))[:5]
        total += 1.0 / (ranked.index(answer) + 1) if answer in ranked else 0.0
    return total / len(truth)


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance by the textbook recursion, memoised (independent of the grader's loop)."""
    from functools import cache

    @cache
    def d(i: int, j: int) -> int:
        if not i or not j:
            return i + j
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))
    return d(len(a), len(b))


def _jaccard(a: str, b: str) -> float:
    left, right = set(a.lower().split()), set(b.lower().split())
    return len(left & right) / len(left | right) if left | right else 1.0


def _binary_f1(truth: list[bool], guess: list[bool]) -> float:
    """F1 of the positive class by its definition, 2 TP / (2 TP + FP + FN)."""
    tp = sum(t and g for t, g in zip(truth, guess, strict=True))
    fp = sum(g and not t for t, g in zip(truth, guess, strict=True))
    fn = sum(t and not g for t, g in zip(truth, guess, strict=True))
    return 2 * tp / (2 * tp + fp + fn)


BINARY_TRUTH = [True, False, True, True, False, False, True, False]
BINARY_GUESS = [True, True, False, True, False, False, True, True]  # TP 3, FP 2, FN 1: 6/9
TEXT_TRUTH = ["the cat sat", "a dog ran far", "birds fly south", "fish swim", "owls hoot at night"]
TEXT_GUESS = ["the cat sat down", "a dog ran", "birds fly north", "fish swim", "owls at night"]
LABEL_TRUTH = ["w1", "w2", "w3", "w4", "w5", "w6"]
LABEL_GUESS = ["w1 w9", "w9 w2 w7", "w3", "w8 w9 w7 w6 w5 w4", "w5 w5 w1", "w1 w2 w3 w4 w5 w6"]


@pytest.mark.parametrize("config_metric, registry, truth, guess, expected", [
    ("MAP@5", "map@5", LABEL_TRUTH, LABEL_GUESS, _map_at_5(LABEL_TRUTH, LABEL_GUESS)),
    ("map-at-5", "map@5", LABEL_TRUTH, LABEL_GUESS, _map_at_5(LABEL_TRUTH, LABEL_GUESS)),
    ("levenshtein-distance", "levenshtein", TEXT_TRUTH, TEXT_GUESS,
     float(np.mean([_edit_distance(a, b) for a, b in zip(TEXT_TRUTH, TEXT_GUESS, strict=True)]))),
    ("jaccard-similarity", "jaccard", TEXT_TRUTH, TEXT_GUESS,
     float(np.mean([_jaccard(a, b) for a, b in zip(TEXT_TRUTH, TEXT_GUESS, strict=True)]))),
    ("Accuracy", "accuracy", LABEL_TRUTH, ["w1", "w2", "x", "w4", "x", "x"], 0.5),
    ("f1-score", "f1", BINARY_TRUTH, BINARY_GUESS, _binary_f1(BINARY_TRUTH, BINARY_GUESS)),
    ("F1", "f1", [int(v) for v in BINARY_TRUTH], [int(v) for v in BINARY_GUESS],
     _binary_f1(BINARY_TRUTH, BINARY_GUESS)),
])
def test_template_configs_with_other_registry_metrics_are_graded(tmp_path, config_metric, registry, truth, guess,
                                                                 expected):
    """Configs copied from MLE-bench's template name metrics in its spellings (and cases); each one the
    registry computes gets the generic grader, scored as computed independently here."""
    slug = "held-" + registry.replace("@", "-at-")
    answers = pd.DataFrame({"key": [f"k{i}" for i in range(len(truth))], "prediction": truth})
    make_competition(tmp_path, slug, config_metric, answers, answers.assign(prediction=truth[0]),
                     grader={"name": config_metric, "grade_fn": f"mlebench.competitions.{slug}.grade:grade"})
    competition = imported(tmp_path, slug)
    spec = grader_for(competition)
    assert spec is not None and (spec.source, spec.metric) == ("generic", registry)
    report = grade(tmp_path, competition, answers.assign(prediction=guess).iloc[::-1])
    assert report.valid_submission, report.error
    assert report.score == pytest.approx(expected, abs=1e-5) and report.grader.startswith("generic grader")


def test_a_grade_fn_whose_module_does_not_exist_still_gets_the_generic_grader(tmp_path, labels):
    answers = labels
    make_competition(tmp_path, "own-module", "accuracy", answers, answers.assign(animal="cat"),
                     grader={"name": "accuracy", "grade_fn": "no_such_package.graders.own_module:grade"})
    competition = imported(tmp_path, "own-module")
    report = grade(tmp_path, competition, answers)
    assert report.valid_submission and report.score == 1.0
    assert any("no_such_package.graders.own_module:grade" in note and "does not run" in note for note in report.notes)


def test_binary_f1_refuses_labels_that_are_not_yes_or_no_with_the_reason(tmp_path):
    answers = pd.DataFrame({"key": [f"k{i}" for i in range(4)], "prediction": [1, 0, 1, 0]})
    make_competition(tmp_path, "held-f1-labels", "f1-score", answers, answers)
    competition = imported(tmp_path, "held-f1-labels")
    report = grade(tmp_path, competition, answers.assign(prediction=["yes", "no", "yes", "no"]))
    assert not report.valid_submission and "binary F1 scores the labels 1/0 or True/False" in report.error

"""make_smoke_competitions: MLE-bench's prepared layout from scikit-learn's bundled data, reference
leaderboards recomputed independently, idempotent, and labelled "not Kaggle humans" wherever medals show."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

from leaderboard.competitions import smoke
from leaderboard.competitions.catalogue import import_catalogue
from leaderboard.models import Agent, Competition, CompetitionAnswers, Experiment, HumanScore, LanguageModel, Run

pytestmark = pytest.mark.django_db
SLUGS = [c.slug for c in smoke.COMPETITIONS]
LABEL = "reference leaderboard (simple baselines), not Kaggle humans"


@pytest.fixture
def smoke_site(smoke_root):
    """The session's smoke files (built by leaderboard.competitions.smoke.build), imported as the command
    imports them."""
    import_catalogue(smoke_root, data_dir=smoke_root / "data")
    return smoke_root


def _state(root):
    files = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}
    rows = list(Competition.objects.filter(slug__in=SLUGS).order_by("slug").values(
        "slug", "config_metric", "leaderboard_kind", "public_data_dir", "n_teams", "gold_threshold",
        "median_threshold"))
    return files, rows, HumanScore.objects.filter(competition__slug__in=SLUGS).count()


def test_layout_and_registration(smoke_site):
    assert len(SLUGS) == 4
    for slug in SLUGS:
        competition = Competition.objects.get(slug=slug)
        public = smoke_site / "data" / slug / "prepared" / "public"
        assert competition.public_data_dir == str(public.resolve())
        assert sorted(p.name for p in public.iterdir()) == ["description.md", "sample_submission.csv", "test.csv",
                                                             "train.csv"]
        answers = CompetitionAnswers.objects.get(competition=competition)
        assert answers.answers_path == str(smoke_site / "data" / slug / "prepared" / "private" / "answers.csv")
        assert competition.leaderboard_kind == "reference" and competition.has_reference_leaderboard
        assert competition.n_teams >= 10 and competition.splits.filter(slug="smoke").exists()
        sample = pd.read_csv(public / "sample_submission.csv")
        test = pd.read_csv(public / "test.csv")
        assert list(sample["id"]) == list(test["id"])
        assert not set(sample.columns[1:]) & set(test.columns)  # the targets are not in test.csv


def test_the_command_builds_and_imports_and_running_twice_changes_nothing(tmp_path):
    root = tmp_path / "smoke"
    out = io.StringIO()
    call_command("make_smoke_competitions", "--root", str(root), stdout=out)
    assert "imported 4, split smoke (4)" in out.getvalue()
    assert Competition.objects.get(slug="smoke-wine").public_data_dir.startswith(str(root.resolve()))
    before = _state(root)
    call_command("make_smoke_competitions", "--root", str(root), stdout=out)
    assert _state(root) == before and "(0 files written)" in out.getvalue()


def test_diabetes_has_categories_and_missing_values(smoke_site):
    train = pd.read_csv(smoke_site / "data" / "smoke-diabetes" / "prepared" / "public" / "train.csv")
    assert set(train["sex"].dropna()) == {"A", "B"}
    assert set(train["age_band"].dropna()) <= {"under-30", "30-44", "45-59", "60-plus"}
    for column in ("bmi", "bp", "sex", "age_band"):
        assert train[column].isna().any(), column
    assert not train["progression"].isna().any()


def test_reference_leaderboard_matches_an_independent_computation(smoke_site):
    """The 'logistic C=1.0' baseline of smoke-breast-cancer, refitted here with scikit-learn alone."""
    public = smoke_site / "data" / "smoke-breast-cancer" / "prepared"
    train = pd.read_csv(public / "public" / "train.csv")
    test = pd.read_csv(public / "public" / "test.csv")
    answers = pd.read_csv(public / "private" / "answers.csv")
    features = [c for c in test.columns if c != "id"]
    scaler = StandardScaler().fit(train[features])
    model = LogisticRegression(C=1.0, max_iter=5000).fit(scaler.transform(train[features]), train["malignant"])
    proba = model.predict_proba(scaler.transform(test[features]))[:, list(model.classes_).index(1)]
    expected = roc_auc_score(answers.set_index("id").loc[test["id"], "malignant"], proba)
    board = pd.read_csv(smoke_site / "competitions" / "smoke-breast-cancer" / "leaderboard.csv")
    assert board.set_index("baseline").loc["logistic C=1.0", "score"] == pytest.approx(expected, abs=1e-9)
    assert list(board["score"]) == sorted(board["score"], reverse=True)  # AUC: best first
    rmse = pd.read_csv(smoke_site / "competitions" / "smoke-diabetes" / "leaderboard.csv")["score"]
    assert list(rmse) == sorted(rmse)  # RMSE: lower is better, best first
    competition = Competition.objects.get(slug="smoke-breast-cancer")
    scores = sorted(board["score"], reverse=True)
    assert competition.gold_threshold in scores and competition.n_teams == len(scores)
    assert competition.median_threshold == pytest.approx(float(np.median(scores)))


def test_answers_are_graded_perfectly(smoke_site, tmp_path):
    """The answers themselves, as a submission, get the best possible score: the grader reads these files."""
    from leaderboard.grading import grade_submission

    best = {"smoke-wine": 1.0, "smoke-breast-cancer": 1.0, "smoke-diabetes": 0.0, "smoke-digits": 0.0}
    for slug in SLUGS:
        answers = smoke_site / "data" / slug / "prepared" / "private" / "answers.csv"
        report = grade_submission(Competition.objects.get(slug=slug), answers)
        assert report.valid_submission, (slug, report.error)
        assert math.isclose(report.score, best[slug], abs_tol=1e-6), slug
        assert any("not Kaggle humans" in note for note in report.notes)


def test_pages_say_reference_not_kaggle_humans(smoke_site, client):
    page = client.get("/competitions/smoke-wine/").content.decode()
    assert "Reference leaderboard" in page and LABEL in " ".join(page.split())
    assert "public data registered: yes" in page
    body = client.get("/api/competitions/smoke-wine/").json()
    assert body["leaderboard_kind"] == "reference" and body["public_data_registered"] is True
    assert "public_data_dir" not in body and str(smoke_site) not in str(body)
    experiment = Experiment.objects.create(agent=Agent.objects.create(name="baseline"),
                                           model=LanguageModel.objects.create(name="none"), time_limit_hours=1)
    run = Run.objects.create(experiment=experiment, competition=Competition.objects.get(slug="smoke-wine"), seed=0,
                             status=Run.Status.GRADED, score=1.0, valid_submission=True, gold_medal=True,
                             any_medal=True)
    assert LABEL in " ".join(client.get(f"/runs/{run.pk}/").content.decode().split())
    board = " ".join(client.get("/?split=smoke").content.decode().split())
    assert LABEL in board and "4 of the split's 4" in board
    assert LABEL not in " ".join(client.get("/?split=lite").content.decode().split())


def test_a_label_outside_the_training_classes_is_an_invalid_file(smoke_site, tmp_path):
    """`cultivar_9` of three cultivars was graded valid, bronze, without a word: the generic grader
    takes the classes from the public train.csv (never from the answers) and names the stray labels."""
    import pandas as pd

    from leaderboard.grading import grade_submission

    wine = Competition.objects.get(slug="smoke-wine")
    answers = pd.read_csv(smoke_site / "data" / "smoke-wine" / "prepared" / "private" / "answers.csv")
    answers.loc[[0, 4], "cultivar"] = "cultivar_9"
    answers.to_csv(tmp_path / "submission.csv", index=False)
    report = grade_submission(wine, tmp_path / "submission.csv")
    assert not report.valid_submission and report.score is None
    assert report.error == ("invalid submission: 2 value(s) of 'cultivar' are not among the 3 classes of the "
                            "training data ('cultivar_0', 'cultivar_1', 'cultivar_2'): 'cultivar_9' in rows 1, 5")
    answers.loc[[0, 4], "cultivar"] = "cultivar_0"  # a wrong but possible label is scored, as before
    answers.to_csv(tmp_path / "submission.csv", index=False)
    assert grade_submission(wine, tmp_path / "submission.csv").valid_submission

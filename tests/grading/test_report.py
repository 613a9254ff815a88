"""Report behaviour around the score: availability, missing answers, MLE-bench quirks and secrecy."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as sk

from leaderboard.grading import grade_submission, grader_for, grading_available
from leaderboard.grading.specs import SPECS
from leaderboard.models import Competition, CompetitionAnswers

MLE_BENCH_FIELDS = {
    "competition_id", "score", "gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold",
    "any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median", "submission_exists",
    "valid_submission", "is_lower_better", "created_at",
}


def _csv(path, frame):
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def cactus_files(tmp_path):
    ids = [f"{k:032x}.jpg" for k in range(40)]
    y = np.arange(40) % 2
    answers = _csv(tmp_path / "answers.csv", pd.DataFrame({"id": ids, "has_cactus": y}))
    submission = _csv(tmp_path / "sub.csv", pd.DataFrame({"id": ids, "has_cactus": np.linspace(0, 1, 40)}))
    return answers, submission, sk.roc_auc_score(y, np.linspace(0, 1, 40))


def test_every_spec_names_a_catalogue_competition(catalogue):
    assert set(SPECS) <= set(catalogue.values_list("slug", flat=True))


def test_every_catalogue_competition_has_a_grader(catalogue):
    slugs = set(catalogue.values_list("slug", flat=True))
    assert len(slugs) == 82 and set(SPECS) == slugs
    assert all(grading_available(slug) for slug in slugs)


def test_competition_without_a_spec_is_not_available(catalogue, cactus_files, monkeypatch):
    answers, submission, _ = cactus_files
    competition = Competition.objects.get(slug="3d-object-detection-for-autonomous-vehicles")
    monkeypatch.delitem(SPECS, competition.slug)  # every catalogue competition has one now
    assert grader_for(competition.slug) is None and not grading_available(competition.slug)
    report = grade_submission(competition, submission, answers)
    assert report.grading_available is False and report.score is None
    assert "grading is not available" in report.error


def test_answers_not_registered(catalogue, cactus_files):
    _, submission, _ = cactus_files
    competition = Competition.objects.get(slug="aerial-cactus-identification")
    CompetitionAnswers.objects.filter(competition=competition).delete()
    report = grade_submission(competition, submission)
    assert report.submission_exists and report.score is None
    assert report.awaiting_answers and not report.grading_available and not report.valid_submission
    assert report.error.startswith("waiting for answers: this site has no answers registered")


def test_registered_answers_are_used_and_never_shown(catalogue, cactus_files):
    answers, submission, expected = cactus_files
    competition = Competition.objects.get(slug="aerial-cactus-identification")
    CompetitionAnswers.objects.update_or_create(competition=competition, defaults={"answers_path": str(answers)})
    report = grade_submission(competition, submission)
    data = report.to_dict()
    assert data["score"] == round(expected, 5) and data["valid_submission"]
    assert MLE_BENCH_FIELDS <= set(data)
    assert str(answers) not in json.dumps(data) and "answers.csv" not in json.dumps(data)


def test_unreadable_answers_do_not_leak_their_path(catalogue, cactus_files, tmp_path):
    _, submission, _ = cactus_files
    competition = Competition.objects.get(slug="aerial-cactus-identification")
    missing = tmp_path / "secret-location" / "test.csv"
    report = grade_submission(competition, submission, missing)
    assert report.score is None and "answers could not be read" in report.error
    assert "secret-location" not in json.dumps(report.to_dict())


def test_report_places_the_score_among_humans(catalogue, cactus_files):
    answers, submission, _ = cactus_files
    competition = Competition.objects.get(slug="aerial-cactus-identification")
    report = grade_submission(competition, submission, answers)
    human = list(competition.human_scores.values_list("score", flat=True))
    worse = sum(score < report.score for score in human)
    assert report.beats_human_pct == round(100 * worse / len(human), 2)
    assert report.human_rank == 1 + sum(score > report.score for score in human)


def test_no_human_baseline_is_said_not_invented(catalogue, tmp_path):
    ids = [f"ISIC_{k:07d}" for k in range(20)]
    answers = _csv(tmp_path / "a.csv", pd.DataFrame({"image_name": ids, "target": np.arange(20) % 2}))
    submission = _csv(tmp_path / "s.csv", pd.DataFrame({"image_name": ids, "target": np.arange(20) % 2}))
    report = grade_submission(Competition.objects.get(slug="siim-isic-melanoma-classification"), submission, answers)
    assert report.score == 1.0 and report.gold_threshold is None and report.human_rank is None
    assert any("no human baseline" in note for note in report.notes)


def test_nomad_scores_rows_by_position_and_says_what_id_matching_would_give(catalogue, tmp_path):
    targets = ["formation_energy_ev_natom", "bandgap_energy_ev"]
    y = np.column_stack([np.linspace(0.1, 0.5, 10), np.linspace(1, 5, 10)])
    answers = pd.DataFrame({"id": range(1, 11), targets[0]: y[:, 0], targets[1]: y[:, 1]})
    submission = answers[::-1]  # perfect values, reversed rows
    report = grade_submission(Competition.objects.get(slug="nomad2018-predict-transparent-conductors"),
                              _csv(tmp_path / "s.csv", submission), _csv(tmp_path / "a.csv", answers))
    positional = np.mean([sk.root_mean_squared_log_error(y[:, k], y[::-1, k]) for k in range(2)])
    assert report.score == round(positional, 5) and report.score > 0
    assert any("matched by id the score would be 0.0" in note for note in report.notes)


def test_jigsaw_uses_columns_by_position_like_mle_bench(catalogue, tmp_path):
    classes = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, (50, 6))
    answers = pd.DataFrame(y, columns=classes).assign(id=[f"{k:016x}" for k in range(50)])
    swapped = pd.DataFrame(y.astype(float), columns=classes).assign(id=answers["id"])
    swapped = swapped[["id", *reversed(classes)]]  # names right, order reversed: scored by position
    report = grade_submission(Competition.objects.get(slug="jigsaw-toxic-comment-classification-challenge"),
                              _csv(tmp_path / "s.csv", swapped), _csv(tmp_path / "a.csv", answers[["id", *classes]]))
    expected = sk.roc_auc_score(y, y[:, ::-1].astype(float), average="macro")
    assert report.score == round(expected, 5) and report.score < 1
    assert any("were scored by position as" in note for note in report.notes)


def test_taxi_does_not_check_keys_and_says_so(catalogue, tmp_path):
    answers = pd.DataFrame({"key": ["a", "b", "c", "d"], "fare_amount": [1.0, 2.0, 3.0, 4.0]})
    submission = pd.DataFrame({"key": ["a", "b", "c", "zz"], "fare_amount": [1.0, 2.0, 3.0, 5.0]})
    report = grade_submission(Competition.objects.get(slug="new-york-city-taxi-fare-prediction"),
                              _csv(tmp_path / "s.csv", submission), _csv(tmp_path / "a.csv", answers))
    assert report.valid_submission and report.score == 0.5  # rmse of (0, 0, 0, 1), paired after sorting
    assert any("without checking them" in note for note in report.notes)


def test_config_metric_disagreement_is_noted(catalogue):
    spec = grader_for("ventilator-pressure-prediction")
    competition = Competition.objects.get(slug="ventilator-pressure-prediction")
    assert competition.config_metric == "dice-hausdorff-combo" and spec.metric == "mae"
    assert any("dice-hausdorff-combo" in note for note in spec.notes)


def test_text_normalization_treats_na_spellings_like_mle_bench(catalogue, tmp_path):
    answers = pd.DataFrame({"id": ["0_0", "0_1", "0_2", "0_3"], "after": ["NA", "", "word", "two"]})
    submission = pd.DataFrame({"id": ["0_0", "0_1", "0_2", "0_3"], "after": ["null", "nan", "word", "NA"]})
    report = grade_submission(Competition.objects.get(slug="text-normalization-challenge-english-language"),
                              _csv(tmp_path / "s.csv", submission), _csv(tmp_path / "a.csv", answers))
    # MLE-bench: read_csv turns NA/''/null/nan into NaN, astype(str) makes them all 'nan' -> 3 of 4 match
    assert report.score == 0.75


def test_metric_direction_agrees_with_every_human_leaderboard(catalogue):
    for slug, spec in SPECS.items():
        competition = Competition.objects.get(slug=slug)
        if competition.has_human_baseline:
            assert competition.is_lower_better == spec.lower_is_better, slug

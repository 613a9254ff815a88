"""Importing the MLE-bench catalogue: the real files, both leaderboard formats, idempotency, bad input."""

import shutil

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from leaderboard.competitions.catalogue import CatalogueError, import_catalogue, read_leaderboard
from leaderboard.models import Competition, HumanScore, Split
from tests.conftest import CATALOGUE_DIR

NO_LEADERBOARD = {
    "3d-object-detection-for-autonomous-vehicles", "google-research-identify-contrails-reduce-global-warming",
    "rsna-2022-cervical-spine-fracture-detection", "rsna-breast-cancer-detection",
    "siim-isic-melanoma-classification", "tensorflow-speech-recognition-challenge",
    "tensorflow2-question-answering",
}


def _split_ids(name):
    lines = (CATALOGUE_DIR / "splits" / f"{name}.txt").read_text().splitlines()
    return {line.strip() for line in lines if line.strip()}


def test_real_catalogue_is_imported(catalogue):
    assert Competition.objects.count() == 82
    assert Competition.objects.filter(n_teams__gt=0).count() == 75
    assert set(Competition.objects.filter(n_teams=0).values_list("slug", flat=True)) == NO_LEADERBOARD
    leaderboards = (CATALOGUE_DIR / "competitions").glob("*/leaderboard.csv")
    rows = sum(len(p.read_text().splitlines()) - 1 for p in leaderboards)
    assert HumanScore.objects.count() == rows
    for split in ("low", "medium", "high", "split75", "dev"):
        assert set(Split.objects.get(slug=split).competitions.values_list("slug", flat=True)) == _split_ids(split)


def test_competition_fields_come_from_config(catalogue):
    titanic = Competition.objects.get(slug="spaceship-titanic")
    assert titanic.name == "Spaceship Titanic"
    assert titanic.config_metric == "accuracy"
    assert titanic.awards_medals is False
    assert titanic.description.startswith("# Overview")
    ventilator = Competition.objects.get(slug="ventilator-pressure-prediction")  # id has a trailing space
    assert ventilator.prizes[0] == {"position": 1, "value": 2500}


def test_reimport_is_idempotent(catalogue):
    before = (Competition.objects.count(), HumanScore.objects.count(), Split.objects.count())
    call_command("import_competitions", str(CATALOGUE_DIR))
    assert (Competition.objects.count(), HumanScore.objects.count(), Split.objects.count()) == before


def test_kaggle_api_leaderboard_format_is_accepted(tmp_path):
    source = CATALOGUE_DIR / "format-samples" / "kaggle-api-leaderboard-spaceship-titanic-partial.csv"
    rows = read_leaderboard(source)
    assert len(rows) == 20
    assert rows[0] == (None, 0.96446)


def test_kaggle_format_import_sets_thresholds(db, tmp_catalogue):
    sample = CATALOGUE_DIR / "format-samples" / "kaggle-api-leaderboard-spaceship-titanic-partial.csv"
    shutil.copy(sample, tmp_catalogue / "competitions" / "spaceship-titanic" / "leaderboard.csv")
    import_catalogue(tmp_catalogue)
    titanic = Competition.objects.get(slug="spaceship-titanic")
    assert titanic.n_teams == 20
    assert titanic.gold_threshold == 0.82183  # N=20: gold at row max(1, int(2.0)) = 2
    assert titanic.bronze_threshold == 0.81903  # row int(8.0) = 8


def _assert_nothing_imported():
    assert not Competition.objects.filter(slug__in=["spaceship-titanic", "aerial-cactus-identification"]).exists()


@pytest.fixture
def empty_db(transactional_db):
    Competition.objects.all().delete()
    return transactional_db


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda d: (d / "competitions/spaceship-titanic/config.yaml").write_text("id: [unclosed\nname: x\n"),
         "spaceship-titanic/config.yaml:2: malformed YAML"),
        (lambda d: (d / "competitions/spaceship-titanic/config.yaml").unlink(),
         "spaceship-titanic/config.yaml: missing config.yaml"),
        (lambda d: (d / "competitions/spaceship-titanic/config.yaml").write_text("name: no id\n"),
         "spaceship-titanic/config.yaml:1: a competition config needs an 'id'"),
        (lambda d: (d / "competitions/aerial-cactus-identification/leaderboard.csv").write_text(
            "rank,score\n1,0.99\n2,abc\n"),
         "aerial-cactus-identification/leaderboard.csv:3: score 'abc' is not a number"),
        (lambda d: (d / "competitions/aerial-cactus-identification/leaderboard.csv").write_text(
            "rank,score\n1,0.99\n2,\n"), "leaderboard.csv:3: score '' is not a number"),
        (lambda d: (d / "competitions/aerial-cactus-identification/leaderboard.csv").write_text(
            "rank,score\n1,nan\n"), "leaderboard.csv:2: score 'nan' is not a finite number"),
        (lambda d: (d / "competitions/aerial-cactus-identification/leaderboard.csv").write_text(
            "team,points\n1,0.9\n"), "leaderboard.csv:1: expected columns"),
        (lambda d: (d / "competitions/aerial-cactus-identification/leaderboard.csv").write_text("rank,score\n"),
         "leaderboard.csv: the leaderboard has no rows"),
        (lambda d: (d / "splits/low.txt").write_text("aerial-cactus-identification\nno-such-competition\n"),
         "splits/low.txt:2: unknown competition id 'no-such-competition'"),
    ],
)
def test_bad_input_names_file_and_line_and_imports_nothing(empty_db, tmp_catalogue, corrupt, message):
    corrupt(tmp_catalogue)
    with pytest.raises(CatalogueError, match=message.replace("[", r"\[").replace("(", r"\(")):
        import_catalogue(tmp_catalogue)
    _assert_nothing_imported()


def test_failure_midway_rolls_back_everything(empty_db, tmp_catalogue, monkeypatch):
    from leaderboard.competitions import catalogue as module

    def explode(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(module.HumanScore.objects, "bulk_create", explode)
    with pytest.raises(RuntimeError):
        import_catalogue(tmp_catalogue)
    _assert_nothing_imported()
    assert not Split.objects.exists()


def test_command_reports_errors_without_traceback(empty_db, tmp_catalogue):
    (tmp_catalogue / "splits" / "dev.txt").write_text("ghost\n")
    with pytest.raises(CommandError, match="nothing imported: .*dev.txt:1: unknown competition id 'ghost'"):
        call_command("import_competitions", str(tmp_catalogue))


def test_command_rejects_missing_directory(db, tmp_path):
    with pytest.raises(CommandError, match="catalogue directory not found"):
        call_command("import_competitions", str(tmp_path / "nope"))


def test_data_dir_registers_answer_paths(db, tmp_catalogue, tmp_path):
    import_catalogue(tmp_catalogue, data_dir=tmp_path / "data")
    answers = Competition.objects.get(slug="spaceship-titanic").answers
    assert answers.answers_path == str((tmp_path / "data" / "spaceship-titanic/prepared/private/test.csv").resolve())
    assert answers.sample_submission_path.endswith("spaceship-titanic/prepared/public/sample_submission.csv")

"""`manage.py grade COMPETITION SUBMISSION [--answers PATH]` prints the report as JSON."""

from __future__ import annotations

import json
import math
from io import StringIO

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from leaderboard.models import Competition, CompetitionAnswers

ANSWERS = "id,EAP,HPL,MWS\nid00001,1,0,0\nid00002,0,1,0\nid00003,0,0,1\n"
SUBMISSION = "id,EAP,HPL,MWS\nid00003,0.1,0.1,0.8\nid00001,0.8,0.1,0.1\nid00002,0.2,0.6,0.2\n"


def _grade(*args) -> dict:
    out = StringIO()
    call_command("grade", *args, stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def files(tmp_path):
    (tmp_path / "answers.csv").write_text(ANSWERS)
    (tmp_path / "sub.csv").write_text(SUBMISSION)
    return tmp_path


def test_grade_with_explicit_answers(catalogue, files):
    report = _grade("spooky-author-identification", str(files / "sub.csv"), "--answers", str(files / "answers.csv"))
    expected = -(math.log(0.8) + math.log(0.8) + math.log(0.6)) / 3
    assert report["score"] == round(expected, 5) and report["valid_submission"] is True
    assert report["is_lower_better"] is True and report["competition_id"] == "spooky-author-identification"
    assert str(files) not in json.dumps(report)


def test_grade_with_registered_answers(catalogue, files):
    competition = Competition.objects.get(slug="spooky-author-identification")
    CompetitionAnswers.objects.update_or_create(competition=competition,
                                                defaults={"answers_path": str(files / "answers.csv")})
    assert _grade("spooky-author-identification", str(files / "sub.csv"))["valid_submission"] is True


def _failing_grade(*args) -> tuple[dict, CommandError]:
    out = StringIO()
    with pytest.raises(CommandError) as failure:
        call_command("grade", *args, stdout=out)
    return json.loads(out.getvalue()), failure.value


def test_grade_reports_an_invalid_file_as_json_and_fails(catalogue, files):
    (files / "bad.csv").write_text("id,EAP\nid00001,1\n")
    report, error = _failing_grade("spooky-author-identification", str(files / "bad.csv"),
                                   "--answers", str(files / "answers.csv"))
    assert report["valid_submission"] is False and "missing column(s) 'HPL', 'MWS'" in report["error"]
    assert error.returncode == 1 and "missing column(s)" in str(error)


def test_a_missing_file_exits_non_zero_with_the_report(catalogue, files):
    report, error = _failing_grade("spooky-author-identification", str(files / "absent.csv"),
                                   "--answers", str(files / "answers.csv"))
    assert report["submission_exists"] is False and report["error"] == "no submission file"
    assert error.returncode == 1


def test_the_process_exit_status_is_non_zero(catalogue, files, capsys):
    """As a shell runs it (manage.py's argv path): JSON on stdout, exit status 1."""
    from django.core.management import execute_from_command_line

    with pytest.raises(SystemExit) as exit_:
        execute_from_command_line(["manage.py", "grade", "spooky-author-identification", str(files / "absent.csv"),
                                   "--answers", str(files / "answers.csv")])
    assert exit_.value.code == 1
    assert json.loads(capsys.readouterr().out)["error"] == "no submission file"


def test_unknown_competition_is_a_command_error(catalogue, files):
    with pytest.raises(CommandError, match="unknown competition 'nope'"):
        _grade("nope", str(files / "sub.csv"))


def test_grade_a_custom_competition_written_from_mle_bench_template(db, tmp_path):
    """Its config names MLE-bench's grade_fn, yet it is not MLE-bench's: the generic grader scores it and
    the report says so."""
    from tests.competitions.test_custom_competitions import imported, make_competition

    answers = pd.DataFrame({"id": [1, 2, 3, 4], "label": ["a", "b", "a", "b"]})
    make_competition(tmp_path, "my-template-copy", "accuracy", answers, answers.assign(label="a"),
                     grader={"name": "accuracy", "grade_fn": "mlebench.competitions.my-template-copy.grade:grade"})
    imported(tmp_path, "my-template-copy")
    (tmp_path / "sub.csv").write_text("id,label\n1,a\n2,b\n3,b\n4,b\n")
    report = _grade("my-template-copy", str(tmp_path / "sub.csv"))
    assert report["score"] == 0.75 and report["valid_submission"] is True
    assert report["grader"].startswith("generic grader")

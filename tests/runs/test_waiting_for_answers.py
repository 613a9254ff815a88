"""A site without a competition's answers: well-formed uploads wait, bad files are invalid now,
and `manage.py regrade` grades the waiting runs once the answers are registered."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command

from leaderboard.models import CompetitionAnswers, Run
from tests.runs.test_submission import IDS, answers_for, eager, submission, submit  # noqa: F401 - eager is a fixture

pytestmark = pytest.mark.usefixtures("eager")


def upload(owner, content: bytes, capture, seed: int = 0) -> Run:
    with capture(execute=True):
        run = submit(owner, seed=seed, submission=ContentFile(content, name="submission.csv"))
    run.refresh_from_db()
    return run


def good_file() -> bytes:
    return submission().read()


def test_a_well_formed_upload_waits_and_is_not_called_invalid(alice, catalogue, django_capture_on_commit_callbacks):
    run = upload(alice, good_file(), django_capture_on_commit_callbacks)
    assert run.status == Run.Status.WAITING and run.state == "waiting for answers"
    assert "invalid" not in run.grading_error and "waiting for answers" in run.grading_error
    assert run.submission_exists and not run.valid_submission and run.score is None
    assert run.grading_report["awaiting_answers"] is True


@pytest.mark.parametrize(("content", "message"), [
    (b"id,label\n1,2\n", "missing column(s) 'PassengerId', 'Transported'"),
    (bytes(range(256)) * 4, "binary data"),
    (b"PassengerId,Transported\n", "no data rows"),
])
def test_a_bad_file_is_invalid_now(alice, catalogue, django_capture_on_commit_callbacks, content, message):
    run = upload(alice, content, django_capture_on_commit_callbacks)
    assert run.status == Run.Status.GRADED and run.state == "invalid submission"
    assert run.grading_error.startswith("invalid submission:") and message in run.grading_error


def test_the_sample_submission_checks_ids_when_it_is_registered(alice, catalogue, tmp_path,
                                                                 django_capture_on_commit_callbacks):
    sample = tmp_path / "sample_submission.csv"
    sample.write_text("PassengerId,Transported\n" + "".join(f"{i},False\n" for i in IDS))
    CompetitionAnswers.objects.create(competition=catalogue.get(slug="spaceship-titanic"),
                                      sample_submission_path=str(sample))
    waiting = upload(alice, good_file(), django_capture_on_commit_callbacks)
    assert waiting.status == Run.Status.WAITING
    assert any("sample submission" in note for note in waiting.grading_report["notes"])
    wrong_ids = b"PassengerId,Transported\n" + b"".join(f"9{i},True\n".encode() for i in IDS)
    invalid = upload(alice, wrong_ids, django_capture_on_commit_callbacks, seed=1)
    assert invalid.state == "invalid submission" and "invalid submission" in invalid.grading_error


def test_a_registered_path_whose_file_is_missing_waits(alice, catalogue, tmp_path, django_capture_on_commit_callbacks):
    CompetitionAnswers.objects.create(competition=catalogue.get(slug="spaceship-titanic"),
                                      answers_path=str(tmp_path / "gone.csv"))
    assert upload(alice, good_file(), django_capture_on_commit_callbacks).status == Run.Status.WAITING


def test_regrade_grades_waiting_runs_once_answers_arrive(alice, catalogue, tmp_path,
                                                         django_capture_on_commit_callbacks):
    run = upload(alice, good_file(), django_capture_on_commit_callbacks)
    other = upload(alice, submission(correct=20).read(), django_capture_on_commit_callbacks, seed=1)
    answers_for(tmp_path, catalogue)
    out = StringIO()
    call_command("regrade", "--competition", "spaceship-titanic", stdout=out)
    run.refresh_from_db()
    other.refresh_from_db()
    assert run.status == other.status == Run.Status.GRADED
    assert run.verification == Run.Verification.VERIFIED and run.score == pytest.approx(1.0)
    assert other.score == pytest.approx(0.5) and run.grading_error == ""
    assert "Regraded 2 run(s): 2 graded" in out.getvalue()


def test_regrade_leaves_other_competitions_and_says_when_nothing_waits(alice, catalogue, tmp_path,
                                                                        django_capture_on_commit_callbacks):
    run = upload(alice, good_file(), django_capture_on_commit_callbacks)
    out = StringIO()
    call_command("regrade", "--competition", "aerial-cactus-identification", stdout=out)
    run.refresh_from_db()
    assert run.status == Run.Status.WAITING and "nothing to grade" in out.getvalue()
    with pytest.raises(CommandError, match="unknown competition"):
        call_command("regrade", "--competition", "nope")


def test_the_competition_pages_show_grader_and_answers_apart(client, catalogue, tmp_path):
    answers_for(tmp_path, catalogue)
    page = client.get("/competitions/").content.decode()
    assert "<th>Grader</th><th>Answers registered</th>" in page
    row = page[page.index("/competitions/spaceship-titanic/"):]
    row = row[:row.index("</tr>")]
    assert '<td class="grader">yes</td>' in row and '<td class="answers">yes</td>' in row
    row = page[page.index("/competitions/aerial-cactus-identification/"):]
    row = row[:row.index("</tr>")]
    assert '<td class="grader">yes</td>' in row and "no: runs wait" in row
    detail = client.get("/competitions/aerial-cactus-identification/").content.decode()
    assert "Answers registered:\n    <strong>no</strong>" in detail


def test_the_format_check_passes_a_good_file_without_answers(catalogue):
    from leaderboard.runs import quotas

    titanic = catalogue.get(slug="spaceship-titanic")
    good = quotas.check_format(competition=titanic, submission=ContentFile(good_file(), name="s.csv"))
    assert good.valid and "passed the format check" in good.message
    bad = quotas.check_format(competition=titanic, submission=ContentFile(b"id,label\n1,2\n", name="s.csv"))
    assert not bad.valid and "missing column(s)" in bad.message

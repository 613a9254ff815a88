"""submit_run: the one door every run comes in through; grade_run: the Celery task behind it."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from leaderboard import tasks
from leaderboard.competitions import medals
from leaderboard.models import Artifact, CompetitionAnswers, Experiment, Run
from leaderboard.runs import outcome
from leaderboard.runs import submission as services
from leaderboard.runs.artifacts import UploadError
from leaderboard.runs.experiments import ExperimentSpec
from leaderboard.runs.submission import submit_run
from tests.queue_support import record_sends
from tests.trajectories.import_support import stored_steps
from webapp import queue

TRAJECTORIES = Path(settings.SHARED_DIR) / "data" / "trajectories"
IDS = [f"{i:04d}_01" for i in range(40)]


def answers_for(tmp_path: Path, catalogue) -> Path:
    """Synthetic spaceship-titanic answers registered the way an administrator would."""
    path = tmp_path / "answers.csv"
    path.write_text("PassengerId,Transported\n" + "".join(f"{i},{n % 2 == 0}\n" for n, i in enumerate(IDS)))
    CompetitionAnswers.objects.update_or_create(
        competition=catalogue.get(slug="spaceship-titanic"), defaults={"answers_path": str(path)}
    )
    return path


def submission(correct: int = 40, name: str = "submission.csv") -> ContentFile:
    rows = "".join(f"{i},{(n % 2 == 0) if n < correct else (n % 2 != 0)}\n" for n, i in enumerate(IDS))
    return ContentFile(("PassengerId,Transported\n" + rows).encode(), name=name)


def submit(owner, **overrides) -> Run:
    fields = dict(owner=owner, competition="spaceship-titanic", agent_name="aide", model_name="gpt-4o",
                  seed=0, submission=submission())
    fields.update(overrides)
    spec, fields = ExperimentSpec.split(fields)
    return submit_run(experiment=spec, **fields)


@pytest.fixture
def eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CELERY_TASK_EAGER_PROPAGATES = True
    from webapp.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


def test_upload_is_graded_after_commit_with_medals_from_our_leaderboard(
    alice, catalogue, tmp_path, eager, django_capture_on_commit_callbacks
):
    answers_for(tmp_path, catalogue)
    with django_capture_on_commit_callbacks(execute=True):
        run = submit(alice)
    run.refresh_from_db()
    competition = catalogue.get(slug="spaceship-titanic")
    assert run.status == Run.Status.GRADED
    assert run.verification == Run.Verification.VERIFIED
    assert run.score == pytest.approx(1.0)
    assert run.medals() == medals.award(1.0, competition.thresholds())
    assert run.gold_medal and run.any_medal
    assert run.human_rank == 1 and run.beats_human_pct > 99
    assert run.grading_report["score"] == pytest.approx(1.0)
    artifact = run.artifacts.get(kind=Artifact.Kind.SUBMISSION)
    assert default_storage.exists(artifact.file.name) and artifact.size > 0 and len(artifact.sha256) == 64


def test_grading_is_enqueued_on_commit_only(alice, catalogue, django_capture_on_commit_callbacks, monkeypatch):
    calls = record_sends(monkeypatch, queue.GRADE_RUN)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = submit(alice)
    assert calls == [] and len(callbacks) == 1
    callbacks[0]()
    assert calls == [run.pk]
    assert run.status == Run.Status.PENDING


def test_same_upload_twice_returns_the_same_run(alice, bob, catalogue):
    first = submit(alice)
    assert submit(alice).pk == first.pk
    assert submit(alice, seed=1).pk != first.pk
    assert submit(bob).pk != first.pk  # another owner's identical files are another run
    assert submit(alice, submission=submission(correct=10)).pk != first.pk
    assert Experiment.objects.filter(agent__name="aide").count() == 2  # one per owner (tests/runs/test_ownership.py)


def test_missing_fields_and_oversized_uploads_are_refused_and_leave_nothing(alice, catalogue, settings):
    before = (Run.objects.count(), Artifact.objects.count())
    with pytest.raises(UploadError, match="agent name"):
        submit(alice, agent_name=" ")
    settings.MAX_UPLOAD_BYTES = 100
    with pytest.raises(UploadError, match="limit"):
        submit(alice)
    assert (Run.objects.count(), Artifact.objects.count()) == before


def test_a_failure_midway_deletes_stored_files_and_rows(alice, catalogue, monkeypatch):
    stored = []
    real_store = services.store_artifact

    def store_then_remember(run, upload, written):
        artifact = real_store(run, upload, written)
        stored.append(artifact.file.name)
        return artifact

    def broken_import(*args, **kwargs):
        raise UploadError("could not import the trajectory: boom")

    monkeypatch.setattr(services, "store_artifact", store_then_remember)
    monkeypatch.setattr(services, "_import_trajectory", broken_import)
    with pytest.raises(UploadError, match="boom"):
        submit(alice)
    assert stored and not any(default_storage.exists(name) for name in stored)
    assert not Run.objects.filter(owner=alice).exists()


def test_a_failure_after_the_steps_are_stored_deletes_their_file(alice, catalogue, monkeypatch):
    from leaderboard.trajectories.store import writing

    names = []
    real_new_name = writing.new_file_name
    monkeypatch.setattr(writing, "new_file_name",
                        lambda run_id: names.append(real_new_name(run_id)) or names[-1])

    def broken_outcome(*args, **kwargs):
        raise UploadError("grading setup failed")

    monkeypatch.setattr(services, "set_outcome", broken_outcome)
    journal = (TRAJECTORIES / "aide" / "translucent-spaniel_journal.json").read_bytes()
    with pytest.raises(UploadError, match="grading setup failed"):
        submit(alice, trajectory_files=[ContentFile(journal, name="journal.json")])
    assert names and not any(default_storage.exists(name) for name in names)
    assert not Run.objects.filter(owner=alice).exists()


def test_trajectory_files_are_imported_as_steps(alice, catalogue):
    journal = (TRAJECTORIES / "aide" / "translucent-spaniel_journal.json").read_bytes()
    run = submit(alice, trajectory_files=[ContentFile(journal, name="journal.json")])
    assert run.trajectory_format == "aide"
    assert run.n_steps == len(stored_steps(run)) > 0
    assert run.artifacts.filter(kind=Artifact.Kind.TRAJECTORY, name="journal.json").exists()


def test_self_reported_score_recomputes_medals_here(alice, catalogue):
    competition = catalogue.get(slug="spaceship-titanic")
    run = submit(alice, submission=None, self_reported_score=competition.bronze_threshold,
                 reported={"score": competition.bronze_threshold, "gold_medal": True})
    assert run.status == Run.Status.GRADED and run.verification == Run.Verification.SELF_REPORTED
    assert run.medals() == medals.award(competition.bronze_threshold, competition.thresholds())
    assert run.any_medal and not run.gold_medal  # the report's claim of gold is not trusted


def _zip(members: dict[str, bytes]) -> ContentFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return ContentFile(buffer.getvalue(), name="run.zip")


def test_a_zipped_run_folder_is_unpacked_into_artifacts(alice, catalogue):
    archive = _zip({
        "spaceship-titanic_0/submission/submission.csv": submission().read(),
        "spaceship-titanic_0/code/train.py": b"print('hi')\n",
        "spaceship-titanic_0/logs/run.log": b"started\n",
    })
    run = submit(alice, submission=archive)
    kinds = dict(run.artifacts.values_list("name", "kind"))
    assert kinds == {"submission/submission.csv": "submission", "code/train.py": "code", "logs/run.log": "log"}
    assert run.status == Run.Status.PENDING


def test_archive_paths_escaping_the_folder_are_refused(alice, catalogue):
    with pytest.raises(UploadError, match="outside"):
        submit(alice, submission=_zip({"../../etc/evil.csv": b"x"}))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        info = tarfile.TarInfo("link")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(info)
    with pytest.raises(UploadError, match="link"):
        submit(alice, submission=ContentFile(buffer.getvalue(), name="run.tar.gz"))
    assert not Run.objects.filter(owner=alice).exists()


def test_zip_bombs_are_refused_by_their_uncompressed_size(alice, catalogue, settings):
    settings.MAX_UPLOAD_BYTES = 200_000
    bomb = _zip({"submission/submission.csv": b"0" * 5_000_000})
    assert bomb.size < settings.MAX_UPLOAD_BYTES
    with pytest.raises(UploadError, match="unpacks"):
        submit(alice, submission=bomb)


def test_grade_run_claims_a_run_once(alice, catalogue, tmp_path):
    answers_for(tmp_path, catalogue)
    run = submit(alice)
    assert tasks.grade_run.apply(args=[run.pk]).get() == Run.Status.GRADED
    assert tasks.grade_run.apply(args=[run.pk]).get() == "not pending"  # already graded: nothing to do


def test_grade_run_records_permanent_errors_without_retrying(alice, catalogue, monkeypatch):
    run = submit(alice)

    def broken(run, **kwargs):
        raise ValueError("the grader fell over")

    monkeypatch.setattr(outcome, "grade_stored_run", broken)
    assert tasks.grade_run.apply(args=[run.pk]).get() == Run.Status.FAILED
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and "fell over" in run.grading_error


def test_grade_run_without_answers_fails_with_a_clear_reason(alice, catalogue):
    CompetitionAnswers.objects.filter(competition__slug="spaceship-titanic").delete()
    run = submit(alice)
    tasks.grade_run.apply(args=[run.pk])
    run.refresh_from_db()
    assert not run.any_medal and "answers" in run.grading_error


def test_unknown_task_still_imports_with_its_name(alice, catalogue):
    run = submit(alice, competition="cifar10", submission=None)
    assert run.competition is None and run.task_name == "cifar10" and run.status == Run.Status.GRADED


def test_transient_errors_are_retried_a_bounded_number_of_times(alice, catalogue, monkeypatch):
    run = submit(alice)
    calls = []

    def flaky(run, **kwargs):
        calls.append(run.pk)
        raise OSError("storage briefly unavailable")

    monkeypatch.setattr(outcome, "grade_stored_run", flaky)
    tasks.grade_run.apply(args=[run.pk])  # eager: retries run inline, without the countdown
    run.refresh_from_db()
    assert len(calls) == tasks.MAX_RETRIES + 1
    assert run.status == Run.Status.FAILED and "after 3 retries" in run.grading_error


def test_run_without_registered_answers_is_not_verified(alice, catalogue, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = submit(alice, seed=7)
    run.refresh_from_db()
    assert run.status == Run.Status.WAITING and run.state == "waiting for answers"
    assert run.verification == Run.Verification.SELF_REPORTED
    assert run.score is None and not run.any_medal
    assert "no answers registered for spaceship-titanic" in run.grading_error


def test_a_locked_database_while_claiming_is_retried(alice, catalogue, monkeypatch, tmp_path):
    from django.db import OperationalError

    answers_for(tmp_path, catalogue)
    run = submit(alice)
    attempts = []
    real_claim = tasks._claim

    def locked_once(run_id, owner):
        attempts.append(run_id)
        if len(attempts) == 1:
            raise OperationalError("database table is locked: leaderboard_run")
        return real_claim(run_id, owner)

    monkeypatch.setattr(tasks, "_claim", locked_once)
    tasks.grade_run.apply(args=[run.pk])  # eager: the retry runs inline
    run.refresh_from_db()
    assert len(attempts) == 2 and run.status == Run.Status.GRADED and run.score == pytest.approx(1.0)

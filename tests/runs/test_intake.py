"""Uploads are staged and acknowledged by the request, imported by a worker:
202 with an intake to follow while it imports, then imported with its run or failed with the reason;
the sweep recovers intakes nobody picked up and claims whose worker died."""

from __future__ import annotations

import gzip
import tarfile
from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from leaderboard.models import Run, RunIntake
from leaderboard.runs import intake
from tests.api.test_runs import payload, token_client
from tests.queue_support import broker_down, record_sends
from tests.web.test_upload_form import form_data
from webapp import queue


@pytest.fixture
def worker_path(settings, tmp_path, monkeypatch):
    """The production path: nothing imported in the request, which answers at once."""
    settings.INTAKE_IN_REQUEST = False
    settings.INTAKE_WAIT_S = 0
    settings.MEDIA_ROOT = tmp_path / "media"
    return record_sends(monkeypatch, queue.IMPORT_INTAKE)  # no broker: the test is the worker


def _huge_member_tar() -> SimpleUploadedFile:
    info = tarfile.TarInfo("run/logs/huge.log")
    info.size = 20 * 1024**3  # claimed by the header; the archive holds a few bytes of it
    return SimpleUploadedFile("run.tar.gz", gzip.compress(info.tobuf() + b"x" * 1024))


def _staged_files() -> list[str]:
    try:
        folders = default_storage.listdir(intake.FOLDER)[0]
    except FileNotFoundError:
        return []
    return [f"{intake.FOLDER}/{d}/{f}" for d in folders for f in default_storage.listdir(f"{intake.FOLDER}/{d}")[1]]


def test_an_upload_is_acknowledged_with_202_then_imported_by_the_worker(alice, catalogue, worker_path):
    client = token_client(alice)
    answer = client.post("/api/runs/", payload(), format="multipart")
    assert answer.status_code == 202, answer.content
    body = answer.json()
    assert body["status"] == "received" and not body["done"] and body["run"] is None
    assert body["status_url"] == f"/api/intakes/{body['id']}/" and worker_path == [body["id"]]
    assert Run.objects.count() == 0 and len(_staged_files()) == 1  # staged, not yet a run

    assert intake.import_intake.apply(args=(body["id"],)).get() == "imported"
    status = client.get(body["status_url"]).json()
    assert status["status"] == "imported" and status["done"] and status["progress"].startswith("imported as run")
    run = Run.objects.get()
    assert status["run"] == run.pk and status["run_url"] == f"/api/runs/{run.pk}/"
    assert client.get(status["run_url"]).json()["status"] == Run.Status.PENDING  # then graded as before
    assert run.artifacts.get().name == "submission.csv" and _staged_files() == []  # staged copy deleted


def test_a_hostile_upload_fails_in_the_worker_with_the_reason(alice, catalogue, worker_path):
    client = token_client(alice)
    answer = client.post("/api/runs/", payload(submission=_huge_member_tar()), format="multipart")
    assert answer.status_code == 202
    intake.import_intake.apply(args=(answer.json()["id"],))
    status = client.get(answer.json()["status_url"]).json()
    assert status["status"] == "failed" and status["failure"] == "invalid"
    assert "limit" in status["error"] and status["progress"].startswith("failed: ")
    assert Run.objects.count() == 0 and _staged_files() == []


def test_only_the_uploader_and_staff_see_an_intake(alice, bob, staff, catalogue, worker_path, client):
    answer = token_client(alice).post("/api/runs/", payload(), format="multipart").json()
    assert token_client(bob).get(answer["status_url"]).status_code == 404
    assert client.get(answer["status_url"]).status_code in (401, 403)
    assert token_client(staff).get(answer["status_url"]).status_code == 200
    client.force_login(bob)
    assert client.get(answer["progress_url"]).status_code == 404


def test_the_form_follows_the_intake_then_moves_on_to_the_run(alice, catalogue, worker_path, client):
    client.force_login(alice)
    answer = client.post("/runs/upload/", form_data())
    received = RunIntake.objects.get()
    assert answer.status_code == 302 and answer.url == f"/runs/intakes/{received.pk}/"
    page = client.get(answer.url)
    assert page.status_code == 200 and "received, waiting for a worker" in page.content.decode()
    assert f'data-status-url="/api/intakes/{received.pk}/"' in page.content.decode()
    intake.import_intake.apply(args=(received.pk,))
    assert client.get(answer.url).url == f"/runs/{Run.objects.get().pk}/progress/"


def test_a_failed_upload_shows_its_reason_on_the_progress_page(alice, catalogue, worker_path, client):
    client.force_login(alice)
    answer = client.post("/runs/upload/", form_data(submission=_huge_member_tar()))
    intake.import_intake.apply(args=(RunIntake.objects.get().pk,))
    page = client.get(answer.url).content.decode()
    assert "Nothing was saved" in page and "limit" in page


def test_the_upload_page_lists_your_recent_uploads_and_how_they_ended(alice, bob, catalogue, worker_path, client):
    token_client(alice).post("/api/runs/", payload(submission=_huge_member_tar()), format="multipart")
    token_client(bob).post("/api/runs/", payload(), format="multipart")
    intake.import_intake.apply(args=(RunIntake.objects.get(owner=alice).pk,))
    client.force_login(alice)
    page = client.get("/runs/upload/").content.decode()
    mine, bobs = RunIntake.objects.get(owner=alice), RunIntake.objects.get(owner=bob)
    assert f'href="/runs/intakes/{mine.pk}/"' in page and "failed: " in page
    assert f'href="/runs/intakes/{bobs.pk}/"' not in page


def test_in_the_request_the_api_answers_with_the_outcome_at_once(alice, catalogue):
    """INTAKE_IN_REQUEST (the suite's setting) or a quick worker: the synchronous contract holds."""
    client = token_client(alice)
    created = client.post("/api/runs/", payload(), format="multipart")
    assert created.status_code == 201 and created.json()["status"] == Run.Status.PENDING
    refused = client.post("/api/runs/", payload(submission=_huge_member_tar()), format="multipart")
    assert refused.status_code == 400 and "limit" in refused.json()["detail"]
    assert RunIntake.objects.filter(status=RunIntake.Status.FAILED).count() == 1


def test_the_request_waits_briefly_for_a_quick_worker(alice, catalogue, worker_path, settings, monkeypatch):
    settings.INTAKE_WAIT_S = 5
    original = RunIntake.refresh_from_db

    def worker_done_meanwhile(self, *args, **kwargs):  # the worker imports while the request waits
        if self.status == RunIntake.Status.RECEIVED and worker_path:
            intake.import_intake.apply(args=(worker_path.pop(),))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(RunIntake, "refresh_from_db", worker_done_meanwhile)
    assert token_client(alice).post("/api/runs/", payload(), format="multipart").status_code == 201


def test_two_identical_intakes_make_one_run(alice, catalogue, worker_path):
    client = token_client(alice)
    ids = [client.post("/api/runs/", payload(), format="multipart").json()["id"] for _ in range(2)]
    for intake_id in ids:
        intake.import_intake.apply(args=(intake_id,))
    first, second = (RunIntake.objects.get(pk=i) for i in ids)
    assert Run.objects.count() == 1 and first.run_id == second.run_id
    assert first.note == "" and second.note.startswith(f"identical to run {first.run_id}")


def test_the_quota_refuses_before_anything_is_staged_and_again_at_import(alice, catalogue, worker_path, settings):
    settings.DAILY_GRADING_QUOTA = 1
    client = token_client(alice)
    waiting = [client.post("/api/runs/", payload(seed=seed), format="multipart").json()["id"] for seed in (0, 1)]
    intake.import_intake.apply(args=(waiting[0],))
    refused = client.post("/api/runs/", payload(seed=2), format="multipart")  # used up: nothing staged
    assert refused.status_code == 429 and RunIntake.objects.count() == 2
    intake.import_intake.apply(args=(waiting[1],))  # queued before the quota was used up
    second = RunIntake.objects.get(pk=waiting[1])
    assert second.status == RunIntake.Status.FAILED and second.failure == "quota" and "UTC" in second.error
    assert client.get(f"/api/intakes/{second.pk}/").json()["failure"] == "quota"
    repeat = client.post("/api/runs/", {**payload(seed=0), "notes": "again", "is_private": True}, format="multipart")
    assert repeat.status_code == 202  # a repeat grades nothing new: allowed, and it may change notes and privacy
    intake.import_intake.apply(args=(repeat.json()["id"],))
    run = RunIntake.objects.get(pk=waiting[0]).run
    run.refresh_from_db()
    assert run.notes == "again" and run.is_private and Run.objects.count() == 1


def test_the_time_limit_fails_the_intake_with_the_reason(alice, catalogue, worker_path, monkeypatch):
    answer = token_client(alice).post("/api/runs/", payload(), format="multipart").json()

    def too_slow(**kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr("leaderboard.runs.submission.submit_run", too_slow)
    assert intake.import_intake.apply(args=(answer["id"],)).get() == RunIntake.Status.FAILED
    failed = RunIntake.objects.get()
    assert failed.failure == "timeout" and "time limit" in failed.error and _staged_files() == []


def test_the_time_limit_reached_while_reading_steps_is_no_short_trajectory(alice, catalogue, worker_path,
                                                                          monkeypatch):
    """The soft limit lands wherever the worker is: inside an importer it must not pass for a bad
    step (which would store the steps read so far as the whole run)."""
    from tests.trajectories.import_support import TRAJECTORIES_DIR

    journal = (TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json").read_bytes()
    upload = payload(trajectory_files=[SimpleUploadedFile("journal.json", journal)])
    answer = token_client(alice).post("/api/runs/", upload, format="multipart").json()
    calls = []

    def limit_reached_at_step_3(step):
        calls.append(step)
        if len(calls) == 3:
            raise SoftTimeLimitExceeded()
        return step

    monkeypatch.setattr("leaderboard.trajectories.importers.sanitize", limit_reached_at_step_3)
    intake.import_intake.apply(args=(answer["id"],))
    failed = RunIntake.objects.get()
    assert failed.status == RunIntake.Status.FAILED and failed.failure == "timeout", failed.error
    assert Run.objects.count() == 0 and len(calls) == 3


def test_the_hard_time_limit_fails_the_intake_at_once(alice, catalogue, worker_path):
    """The hard limit kills the import; the worker's main process calls on_failure, which records it
    (without it the upload would wait for its lease and be imported again)."""
    from celery.exceptions import TimeLimitExceeded

    answer = token_client(alice).post("/api/runs/", payload(), format="multipart").json()
    assert intake._claim(answer["id"], "intake-task-1")
    intake.import_intake.on_failure(TimeLimitExceeded(630), "task-1", (answer["id"],), {}, None)
    failed = RunIntake.objects.get()
    assert failed.status == RunIntake.Status.FAILED and failed.failure == "timeout" and _staged_files() == []
    intake.import_intake.on_failure(ValueError("other"), "task-2", (answer["id"],), {}, None)  # not a time limit
    assert RunIntake.objects.get().error == failed.error


def test_a_database_error_is_retried_then_fails_with_the_reason(alice, catalogue, worker_path, settings, monkeypatch):
    from django.db import OperationalError

    settings.INTAKE_MAX_ATTEMPTS = 2
    answer = token_client(alice).post("/api/runs/", payload(), format="multipart").json()

    def database_locked(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr("leaderboard.runs.submission.submit_run", database_locked)
    assert intake.import_intake.apply(args=(answer["id"],)).get() == RunIntake.Status.RECEIVED  # handed back
    assert intake.sweep_intakes()["intakes_requeued"] == 1  # at once: it was claimed before
    assert intake.import_intake.apply(args=(answer["id"],)).get() == RunIntake.Status.FAILED
    failed = RunIntake.objects.get()
    assert failed.failure == "internal" and "database failed 2 times" in failed.error and _staged_files() == []


def test_a_broker_down_at_upload_leaves_it_received_for_the_sweep(alice, catalogue, worker_path, settings, monkeypatch):
    broker_down(monkeypatch)
    answer = token_client(alice).post("/api/runs/", payload(), format="multipart")
    assert answer.status_code == 202
    received = RunIntake.objects.get()
    assert received.status == RunIntake.Status.RECEIVED and received.enqueued_at is None
    assert intake.sweep_intakes()["intakes_requeued"] == 0  # not stale yet, and the broker is still down
    settings.STALE_PENDING_S = 0
    assert intake.sweep_intakes()["intakes_requeued"] == 0
    assert RunIntake.objects.get().enqueued_at is None  # put back for the next sweep
    published = record_sends(monkeypatch, queue.IMPORT_INTAKE)
    assert intake.sweep_intakes()["intakes_requeued"] == 1 and published == [received.pk]
    assert intake.sweep_intakes()["intakes_requeued"] == 1  # published long ago (STALE 0) and untouched


def test_an_expired_claim_is_retried_then_failed_with_the_reason(alice, catalogue, worker_path, settings):
    settings.INTAKE_MAX_ATTEMPTS = 2
    answer = token_client(alice).post("/api/runs/", payload(), format="multipart").json()
    expired = timezone.now() - timedelta(seconds=1)
    for attempt in (1, 2):  # a worker claims it and dies (kill -9): the lease runs out
        assert intake._claim(answer["id"], f"dead-worker-{attempt}")
        RunIntake.objects.filter(pk=answer["id"]).update(lease_expires_at=expired)
        counts = intake.sweep_intakes()
        state = RunIntake.objects.get()
        if attempt == 1:
            assert counts["intakes_retried"] == 1 and state.status == RunIntake.Status.RECEIVED
            assert state.progress == "received, retrying (attempt 2)"
        else:
            assert counts["intakes_failed"] == 1 and state.status == RunIntake.Status.FAILED
            assert state.failure == "interrupted" and "interrupted 2 times" in state.error
    assert _staged_files() == [] and Run.objects.count() == 0
    assert intake._finish(state, "dead-worker-2", run=None, failure="invalid") == "claim lost"  # a late writer


def test_a_live_claim_is_left_alone(alice, catalogue, worker_path):
    answer = token_client(alice).post("/api/runs/", payload(), format="multipart").json()
    assert intake._claim(answer["id"], "busy-worker") and not intake._claim(answer["id"], "second-worker")
    assert intake.sweep_intakes() == {"intakes_retried": 0, "intakes_failed": 0, "intakes_requeued": 0}
    assert intake.import_intake.apply(args=(answer["id"],)).get() == "not received"


def test_the_worker_registers_the_task():
    import leaderboard.tasks  # noqa: F401 - what a worker imports (Celery discovers tasks modules)
    from webapp.celery import app

    assert "leaderboard.intake.import_intake" in app.tasks


def test_the_schema_documents_the_202_and_the_intake_endpoint(client, db):
    schema = client.get("/api/schema/?format=json").json()
    responses = schema["paths"]["/api/runs/"]["post"]["responses"]
    assert {"200", "201", "202", "400", "429"} <= set(responses)
    assert responses["202"]["content"]["application/json"]["schema"]["$ref"].endswith("/Intake")
    assert "get" in schema["paths"]["/api/intakes/{id}/"]

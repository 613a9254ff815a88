"""A real worker enforces the import's time limit: an upload that takes longer fails with that reason,
and no run (not a short one) is left. Time limits need Celery's prefork pool."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Artifact, Run, RunIntake
from leaderboard.runs import intake
from tests.job_support import WorkerProcess, wait_until
from webapp.celery import app

pytestmark = pytest.mark.django_db(transaction=True)
N_FILES = 9_500  # each stored as an artifact: seconds of importing, within the archive's 10,000 members


def many_files_archive() -> SimpleUploadedFile:
    """A run folder of many small logs (within the archive limits): slow to import, legitimately."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for n in range(N_FILES):
            zf.writestr(f"run/logs/{n:05d}.log", f"line {n}\n")
    return SimpleUploadedFile("run.zip", buffer.getvalue())


def test_an_import_past_its_time_limit_fails_with_the_reason(catalogue, alice, tmp_path, settings, monkeypatch):
    settings.INTAKE_IN_REQUEST = False
    # The publisher (the web process, here the test) writes the task's limits into the message.
    # The import takes 3 s and more (5,000 files took under 2 s on an idle machine, past a 2 s limit once).
    monkeypatch.setattr(intake.import_intake, "soft_time_limit", 1)
    monkeypatch.setattr(intake.import_intake, "_exec_options", None)  # Celery caches them at the first publish
    app.control.purge()
    worker = WorkerProcess(tmp_path / "worker.log", "celery", pool="prefork")
    try:
        received = intake.receive(owner=alice, submission=many_files_archive(), metadata={
            "competition": "spaceship-titanic", "agent_name": "aide", "model_name": "gpt-4o", "seed": 0})
        wait_until(lambda: RunIntake.objects.get(pk=received.pk).done, 90, "imported or failed", worker)
    finally:
        worker.stop()
    received.refresh_from_db()
    assert received.status == RunIntake.Status.FAILED and received.failure == "timeout", received.error
    assert "1 s time limit" in received.error and received.attempts == 1
    assert Run.objects.count() == 0 and not Artifact.objects.exists()  # rolled back, not a partial run

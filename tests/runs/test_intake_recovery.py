"""A worker killed (kill -9) while it imports an upload loses nothing: once its lease expires the sweep
of another worker hands the upload on, and it is imported once, on the second attempt."""

from __future__ import annotations

import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Run, RunIntake
from leaderboard.runs import intake
from tests.job_support import WorkerProcess, wait_until
from webapp.celery import app

pytestmark = pytest.mark.django_db(transaction=True)
N_STEPS = 300_000  # 55 MB: about a second of importing in the worker on this machine


def _long_trajectory() -> SimpleUploadedFile:
    lines = [json.dumps({"format": "medalboard-trajectory", "version": 1, "task": "spaceship-titanic"})]
    lines += [json.dumps({"kind": "plan", "t": i, "title": f"step {i}", "text": "think " * 20}) for i in range(N_STEPS)]
    return SimpleUploadedFile("trajectory.jsonl", ("\n".join(lines) + "\n").encode())


def _wait_for_the_claim(intake_id: int, worker: WorkerProcess) -> None:
    """Polled every 20 ms (the import takes about a second on this machine), so the kill lands mid-import."""
    deadline = time.monotonic() + 60
    while RunIntake.objects.get(pk=intake_id).status != RunIntake.Status.IMPORTING:
        assert time.monotonic() < deadline, f"not claimed after 60 s\n{worker.output()}"
        time.sleep(0.02)


def test_an_import_whose_worker_was_killed_is_imported_once_by_another(catalogue, alice, tmp_path, settings):
    settings.INTAKE_IN_REQUEST = False
    app.control.purge()
    first = WorkerProcess(tmp_path / "worker-1.log", "celery", extra_env={"MEDALBOARD_INTAKE_LEASE_S": "3"})
    second = None
    try:
        received = intake.receive(owner=alice, trajectory_files=[_long_trajectory()], metadata={
            "competition": "spaceship-titanic", "agent_name": "aide", "model_name": "gpt-4o", "seed": 0})
        _wait_for_the_claim(received.pk, first)
        first.kill9()
        received.refresh_from_db()
        assert received.status == RunIntake.Status.IMPORTING and received.attempts == 1  # killed mid-import
        second = WorkerProcess(tmp_path / "worker-2.log", "celery", extra_env={"MEDALBOARD_INTAKE_LEASE_S": "600"})
        wait_until(lambda: RunIntake.objects.get(pk=received.pk).done, 120, "imported by the second worker", second)
    finally:
        for worker in (first, second):
            if worker is not None:
                worker.stop()
    received.refresh_from_db()
    assert received.status == RunIntake.Status.IMPORTED, received.error
    assert received.attempts == 2 and Run.objects.count() == 1
    assert received.run.n_steps == N_STEPS

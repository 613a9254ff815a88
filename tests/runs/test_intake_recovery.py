"""A worker killed (kill -9) while it imports an upload loses nothing: its lease, renewed while it
imports, runs out within seconds, the sweep of another worker hands the upload on, and it is
imported once, on the second attempt, whatever the import's time limit."""

from __future__ import annotations

import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Run, RunIntake
from leaderboard.runs import intake
from tests.job_support import WorkerProcess, done_once_by_the_survivor, kill_the_holder, slow_work_env, wait_until
from webapp.celery import app

pytestmark = pytest.mark.django_db(transaction=True)
N_STEPS = 2_000
# The workers' leases and sweeps, scaled down from a minute and 30 s; the import takes twice a lease.
LEASE_S, SWEEP_S, SLOW_S = 3.0, 1.0, 6.0


def _trajectory() -> SimpleUploadedFile:
    lines = [json.dumps({"format": "medalboard-trajectory", "version": 1, "task": "spaceship-titanic"})]
    lines += [json.dumps({"kind": "plan", "t": i, "title": f"step {i}", "text": "think " * 20}) for i in range(N_STEPS)]
    return SimpleUploadedFile("trajectory.jsonl", ("\n".join(lines) + "\n").encode())


@pytest.mark.alone  # seconds-long leases on real workers: timing the parallel load would upset
def test_an_import_whose_worker_was_killed_is_imported_once_by_another(catalogue, alice, tmp_path, settings):
    """Two real workers, each sweeping every second; the one importing is killed halfway through
    the transaction that stores the run."""
    settings.INTAKE_IN_REQUEST = False
    app.control.purge()
    log = tmp_path / "work.log"
    env = slow_work_env(log, SLOW_S, INTAKE_LEASE_S=str(LEASE_S), SWEEP_INTERVAL_S=str(SWEEP_S),
                        INTAKE_TIME_LIMIT_S="600")
    workers = [WorkerProcess(tmp_path / f"worker-{n}.log", "celery", extra_env=env) for n in (1, 2)]
    try:
        received = intake.receive(owner=alice, trajectory_files=[_trajectory()], metadata={
            "competition": "spaceship-titanic", "agent_name": "aide", "model_name": "gpt-4o", "seed": 0})
        holder, survivor, killed = kill_the_holder(workers, log, LEASE_S, "importing", lambda: _mid_import(received))
        wait_until(lambda: RunIntake.objects.get(pk=received.pk).done, 120, "imported by the survivor", survivor)
        took = time.time() - killed
    finally:
        for worker in workers:
            worker.stop()
    received.refresh_from_db()
    assert received.status == RunIntake.Status.IMPORTED, received.error
    assert received.attempts == 2 and Run.objects.count() == 1
    assert received.run.n_steps == N_STEPS and received.note == ""  # a new run, not a repeat of a half-kept one
    noticed = done_once_by_the_survivor(log, holder, survivor, killed, within=LEASE_S + SWEEP_S + 10)
    assert took < 120
    print(f"killed mid-import: imported again {noticed:.1f} s after the kill, done {took:.1f} s after it")


def _mid_import(received: RunIntake) -> None:
    received.refresh_from_db()
    assert received.status == RunIntake.Status.IMPORTING and received.attempts == 1

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
from tests.job_support import WorkerProcess, slow_work_env, wait_until, work_log
from webapp.celery import app

pytestmark = pytest.mark.django_db(transaction=True)
N_STEPS = 2_000
# The workers' leases and sweeps, scaled down from a minute and 30 s; the import takes twice a lease.
LEASE_S, SWEEP_S, SLOW_S = 3.0, 1.0, 6.0


def _trajectory() -> SimpleUploadedFile:
    lines = [json.dumps({"format": "medalboard-trajectory", "version": 1, "task": "spaceship-titanic"})]
    lines += [json.dumps({"kind": "plan", "t": i, "title": f"step {i}", "text": "think " * 20}) for i in range(N_STEPS)]
    return SimpleUploadedFile("trajectory.jsonl", ("\n".join(lines) + "\n").encode())


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
        started = wait_until(lambda: [entry for entry in work_log(log) if entry[0] == "start"], 90, "importing")
        holder = next(w for w in workers if w.process.pid == started[0][2])
        survivor = next(w for w in workers if w is not holder)
        time.sleep(1.5 * LEASE_S)  # past a lease length, with the survivor sweeping all along
        received.refresh_from_db()
        assert received.status == RunIntake.Status.IMPORTING and received.attempts == 1  # mid-import
        holder.kill9()
        killed = time.time()
        wait_until(lambda: RunIntake.objects.get(pk=received.pk).done, 120, "imported by the survivor", survivor)
        took = time.time() - killed
    finally:
        for worker in workers:
            worker.stop()
    received.refresh_from_db()
    assert received.status == RunIntake.Status.IMPORTED, received.error
    assert received.attempts == 2 and Run.objects.count() == 1
    assert received.run.n_steps == N_STEPS and received.note == ""  # a new run, not a repeat of a half-kept one
    done = work_log(log)
    assert [(event, pid) for event, _, pid, _ in done] == [
        ("start", holder.process.pid), ("start", survivor.process.pid), ("done", survivor.process.pid)]
    noticed = done[1][3] - killed
    assert noticed < LEASE_S + SWEEP_S + 10, f"noticed {noticed:.1f} s after the kill"
    assert took < 120
    print(f"killed mid-import: imported again {noticed:.1f} s after the kill, done {took:.1f} s after it")

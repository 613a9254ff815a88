"""A run is never stuck and never graded twice. Grading claims have an owner and
a lease; the sweep re-queues expired claims and pending runs nobody picked up, with bounded attempts;
a grader that lost its claim writes nothing; a real worker killed mid-grading is noticed within a
lease (renewed while it grades) and its run graded once by another."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboard import tasks
from leaderboard.models import Run
from leaderboard.runs import recovery
from tests.job_support import WorkerProcess, done_once_by_the_survivor, kill_the_holder, slow_work_env, wait_until
from tests.queue_support import broker_down, record_sends
from tests.runs.test_submission import answers_for, submit
from webapp import queue


@pytest.fixture
def published(monkeypatch):
    return record_sends(monkeypatch, queue.GRADE_RUN)


def expire(run: Run) -> None:
    Run.objects.filter(pk=run.pk).update(grading_lease_expires_at=timezone.now() - timedelta(seconds=1))


def test_an_expired_claim_is_requeued_then_graded_once(alice, catalogue, tmp_path, published):
    answers_for(tmp_path, catalogue)
    run = submit(alice)
    assert tasks.claim_grading(run.pk, "worker-a")  # worker a claims, then dies
    assert not tasks.claim_grading(run.pk, "worker-b")  # nobody else can while it holds the claim
    expire(run)
    assert recovery.sweep_grading() == {"retried": 1, "failed": 0, "requeued_pending": 1}
    run.refresh_from_db()
    assert run.status == Run.Status.PENDING and "attempt 1 was interrupted" in run.grading_error
    assert published == [run.pk]
    assert tasks.grade_run.apply(args=[run.pk]).get() == Run.Status.GRADED
    run.refresh_from_db()
    assert run.grading_attempts == 2 and run.score == pytest.approx(1.0)
    assert tasks.grade_claimed(run.pk, "worker-a") == "claim lost"  # a's late result is dropped
    assert recovery.sweep_grading() == {"retried": 0, "failed": 0, "requeued_pending": 0}


def test_after_max_attempts_the_run_fails_with_the_reason(alice, catalogue, published, settings):
    settings.GRADING_MAX_ATTEMPTS = 2
    run = submit(alice)
    for attempt in (1, 2):
        assert tasks.claim_grading(run.pk, f"worker-{attempt}")
        expire(run)
        recovery.sweep_grading()
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert run.grading_error == "grading was interrupted 2 times (the worker grading it was lost); gave up"


def test_a_stale_grader_cannot_overwrite_the_new_one(alice, catalogue, tmp_path, published, monkeypatch):
    answers_for(tmp_path, catalogue)
    run = submit(alice)
    assert tasks.claim_grading(run.pk, "slow")
    expire(run)
    recovery.sweep_grading()
    assert tasks.claim_grading(run.pk, "fresh")
    assert tasks.grade_claimed(run.pk, "slow") == "claim lost"
    run.refresh_from_db()
    assert run.status == Run.Status.GRADING and run.grading_owner == "fresh" and run.score is None
    assert tasks.grade_claimed(run.pk, "fresh") == Run.Status.GRADED


def test_a_run_whose_grading_could_not_be_enqueued_is_picked_up_by_the_sweep(
    alice, catalogue, tmp_path, monkeypatch, settings, django_capture_on_commit_callbacks
):
    answers_for(tmp_path, catalogue)

    broker_down(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        run = submit(alice)
    run.refresh_from_db()
    assert run.status == Run.Status.PENDING and run.grading_enqueued_at is None
    assert recovery.sweep_grading()["requeued_pending"] == 0  # too fresh: its own enqueue may still come
    Run.objects.filter(pk=run.pk).update(updated_at=timezone.now() - timedelta(seconds=settings.STALE_PENDING_S + 1))
    assert recovery.sweep_grading()["requeued_pending"] == 0  # the broker is still down: stays pending
    sent = record_sends(monkeypatch, queue.GRADE_RUN)  # the broker is back
    assert recovery.sweep_grading()["requeued_pending"] == 1 and sent == [run.pk]
    assert recovery.sweep_grading()["requeued_pending"] == 0  # enqueued: not again until it is stale
    run.refresh_from_db()
    assert run.grading_enqueued_at is not None


# The workers' leases and sweeps, scaled down from a minute and 30 s so the test takes seconds; the
# grading takes twice a lease, so it is only ever done once if its lease is renewed while it runs.
LEASE_S, SWEEP_S, SLOW_S = 3.0, 1.0, 6.0


@pytest.mark.alone  # seconds-long leases on real workers: timing the parallel load would upset
def test_kill_9_of_a_worker_mid_grading_ends_graded_once(transactional_db, catalogue, alice, tmp_path):
    """Two real workers, each sweeping every second. The one grading is killed (SIGKILL) halfway; the
    other notices within a lease and a sweep, grades the run again (renewing its own short lease,
    so its own sweeps leave it alone) and the run is graded once, on attempt 2."""
    from webapp.celery import app

    answers_for(tmp_path, catalogue)
    app.control.purge()
    log = tmp_path / "work.log"
    env = slow_work_env(log, SLOW_S, GRADING_LEASE_S=str(LEASE_S), SWEEP_INTERVAL_S=str(SWEEP_S))
    workers = [WorkerProcess(tmp_path / f"worker-{n}.log", "celery", extra_env=env) for n in (1, 2)]
    try:
        run = submit(alice)  # autocommit: enqueued at once
        holder, survivor, killed = kill_the_holder(workers, log, LEASE_S, "grading", lambda: _mid_grading(run))
        run = wait_until(lambda: Run.objects.filter(pk=run.pk, status__in=("graded", "failed")).first(), 120,
                         "graded again", survivor)
        took = time.time() - killed
    finally:
        for worker in workers:
            worker.stop()
    assert run.status == Run.Status.GRADED, run.grading_error
    assert run.grading_attempts == 2 and run.score == pytest.approx(1.0)
    assert "attempt 1 was interrupted" in run.grading_error or run.grading_error == ""
    noticed = done_once_by_the_survivor(log, holder, survivor, killed, within=LEASE_S + SWEEP_S + 10)
    assert took < 120
    print(f"killed mid-grading: graded again {noticed:.1f} s after the kill, graded {took:.1f} s after it")


def _mid_grading(run: Run) -> None:
    run.refresh_from_db()
    assert run.status == Run.Status.GRADING and run.grading_attempts == 1, run.grading_error


def test_the_progress_page_says_what_is_happening(client, alice, catalogue, published):
    run = submit(alice)
    status = lambda: client.get(f"/runs/{run.pk}/status.json").json()["progress"]  # noqa: E731
    assert status() == "queued for grading"
    assert "queued for grading" in client.get(f"/runs/{run.pk}/progress/").content.decode()
    tasks.claim_grading(run.pk, "w1")
    assert status() == "grading"
    expire(run)
    recovery.sweep_grading()
    assert status() == "retrying (attempt 2)"
    tasks.claim_grading(run.pk, "w2")
    assert status() == "grading (attempt 2)"
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED, grading_error="the grader fell over")
    assert status() == "failed: the grader fell over"


def test_a_run_left_queued_says_it_may_be_stuck(client, alice, catalogue, published, settings):
    """A grading whose task was lost (a worker that died on the broker) says so instead of sitting on
    "queued for grading", and the sweep queues it again."""
    settings.GRADING_STUCK_AFTER_S = 60
    run = submit(alice)
    status = lambda: client.get(f"/runs/{run.pk}/status.json").json()["progress"]  # noqa: E731
    Run.objects.filter(pk=run.pk).update(updated_at=timezone.now() - timedelta(seconds=59))
    assert status() == "queued for grading"
    Run.objects.filter(pk=run.pk).update(updated_at=timezone.now() - timedelta(minutes=10))
    assert status().startswith("queued for grading, waiting 10 min: no worker has taken it yet")
    assert "is a runner running?" in client.get(f"/runs/{run.pk}/progress/").content.decode()
    run_page = client.get(client.get(f"/runs/{run.pk}/status.json").json()["url"]).content.decode()
    assert "no worker has taken it yet" in run_page
    Run.objects.filter(pk=run.pk).update(grading_enqueued_at=timezone.now() - timedelta(minutes=10))
    published.clear()
    assert recovery.sweep_grading()["requeued_pending"] == 1 and published == [run.pk]

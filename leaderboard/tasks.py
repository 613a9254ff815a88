"""Celery tasks of the leaderboard: grading uploaded runs and their submission snapshots.

Tasks take ids. A run is claimed through the lease machine (webapp.leases: pending -> grading, an
owner, a short lease renewed while it grades, attempts + 1) so two workers never grade the same run,
and its result is stored only while the claim still holds; the sweep (leaderboard.runs.recovery)
re-queues expired claims and pending runs nobody picked up; transient failures (storage hiccups)
are retried a bounded number of times, anything else marks the run failed with the reason.
"""

from __future__ import annotations

import logging
import uuid

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import OperationalError

from leaderboard.models import Run, Snapshot
from webapp import leases

log = logging.getLogger(__name__)

# Storage hiccups, and a database that is briefly locked or unreachable, are worth another try.
TRANSIENT_ERRORS = (OSError, TimeoutError, ConnectionError, OperationalError)
MAX_RETRIES = 3
# Grading a run and grading one of its snapshots run under the same limits and late acknowledgement.
GRADING_TASK = {
    "max_retries": MAX_RETRIES, "acks_late": True,
    "soft_time_limit": min(settings.CELERY_TASK_SOFT_TIME_LIMIT, 1800),
    "time_limit": min(settings.CELERY_TASK_TIME_LIMIT, 1900),
}


GRADINGS = leases.Leased(
    Run, "grading of run", waiting=Run.Status.PENDING, working=Run.Status.GRADING, failed=Run.Status.FAILED,
    lease_s=lambda: settings.GRADING_LEASE_S, owner="grading_owner", expires="grading_lease_expires_at",
    attempts="grading_attempts",
)


def _claim(run_id: int, owner: str) -> bool:
    return claim_grading(run_id, owner)


def claim_grading(run_id: int, owner: str) -> bool:
    """pending -> grading, held by `owner` while its lease is renewed (the sweep recovers it once not)."""
    return leases.claim(GRADINGS, run_id, owner) is not None


def _held(run_id: int, owner: str) -> leases.Lease:
    return leases.Lease(GRADINGS, run_id, owner)


def _fail(run_id: int, message: str, owner: str) -> None:
    leases.end(_held(run_id, owner), Run.Status.FAILED, grading_error=message[:5000])


def grade_claimed(run_id: int, owner: str) -> str:
    """Grade a run this owner claimed, renewing the claim meanwhile; the result is stored only if
    the claim still holds (fenced in the same transaction). Transient errors hand the run back as
    pending and re-raise."""
    from leaderboard.runs.outcome import grade_stored_run

    held = _held(run_id, owner)
    run = Run.objects.select_related("competition").get(pk=run_id)
    try:
        with leases.Heartbeat(held):
            grade_stored_run(run, fence=lambda: leases.fence(held))
    except leases.LeaseLost:
        log.warning("run %s: grading result dropped, the claim moved on", run_id)
        return "claim lost"
    except SoftTimeLimitExceeded:
        _fail(run_id, "grading took longer than its time limit", owner)
        return Run.Status.FAILED
    except TRANSIENT_ERRORS:
        leases.release(held, grading_enqueued_at=None)
        raise
    except Exception as exc:  # noqa: BLE001 - permanent: record why, never retry
        log.exception("grading run %s failed", run_id)
        _fail(run_id, f"{exc.__class__.__name__}: {exc}", owner)
        return Run.Status.FAILED
    return run.status


def _is_research_trace(run_id: int) -> bool:
    from leaderboard.runs.research_traces import is_trace_to_score

    run = Run.objects.filter(pk=run_id, status=Run.Status.PENDING).select_related("competition").first()
    return run is not None and is_trace_to_score(run)


@shared_task(name="leaderboard.tasks.grade_run", bind=True, reject_on_worker_lost=True, **GRADING_TASK)
def grade_run(self, run_id: int) -> str:
    """Grade one pending run; returns the status it ended in (or why nothing was done)."""
    if _is_research_trace(run_id):  # scored by its task's eval.py on a runner, never here
        from leaderboard.runs.research_traces import ask_a_runner

        return "asked a runner" if ask_a_runner(run_id) else "not sent (the sweep sends it again)"
    owner = f"grade-{self.request.id or uuid.uuid4().hex}-{self.request.retries}"
    try:
        claimed = _claim(run_id, owner)
    except OperationalError as exc:  # nothing was changed: the run is still pending
        if self.request.retries >= MAX_RETRIES:
            raise
        raise self.retry(exc=exc, countdown=10 * 2**self.request.retries) from exc
    if not claimed:
        return "not pending"
    try:
        return grade_claimed(run_id, owner)
    except TRANSIENT_ERRORS as exc:
        if self.request.retries >= MAX_RETRIES:
            Run.objects.filter(pk=run_id, status=Run.Status.PENDING).update(
                status=Run.Status.FAILED, grading_error=f"grading failed after {MAX_RETRIES} retries: {exc}"[:5000])
            return Run.Status.FAILED
        raise self.retry(exc=exc, countdown=10 * 2**self.request.retries) from exc


@shared_task(name="leaderboard.tasks.grade_snapshot", bind=True, **GRADING_TASK)
def grade_snapshot(self, snapshot_id: int) -> str:
    """Grade one pending snapshot (leaderboard.runs.snapshots), claimed like a run; returns its status."""
    from leaderboard.runs.snapshots import grade_stored_snapshot

    rows = Snapshot.objects.filter(pk=snapshot_id)
    if rows.filter(status=Snapshot.Status.PENDING).update(status=Snapshot.Status.GRADING) != 1:
        return "not pending"
    try:
        return grade_stored_snapshot(Snapshot.objects.select_related("run__competition", "artifact")
                                     .get(pk=snapshot_id)).status
    except TRANSIENT_ERRORS as exc:
        if self.request.retries >= MAX_RETRIES:
            rows.update(status=Snapshot.Status.FAILED, grading_error=f"grading failed after retries: {exc}"[:5000])
            return Snapshot.Status.FAILED
        rows.update(status=Snapshot.Status.PENDING)
        raise self.retry(exc=exc, countdown=10 * 2**self.request.retries) from exc
    except Exception as exc:  # noqa: BLE001 - permanent (including the soft time limit): record why
        log.exception("grading snapshot %s failed", snapshot_id)
        rows.update(status=Snapshot.Status.FAILED, grading_error=f"{exc.__class__.__name__}: {exc}"[:5000])
        return Snapshot.Status.FAILED


# Tasks of other modules, imported here so that every worker registers them (Celery discovers tasks.py).
from leaderboard.runs.intake import import_intake  # noqa: E402,F401
from leaderboard.trust.tasks import review_run_task  # noqa: E402,F401

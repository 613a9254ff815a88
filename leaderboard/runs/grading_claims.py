"""Grading a run under a claim: the lease machine's record for gradings (pending -> grading, an owner and a
short lease renewed while it grades, attempts + 1), the claim, and the fenced work. The Celery task
(leaderboard.tasks.grade_run) and job runs (job_runs) both grade through here."""

from __future__ import annotations

import logging

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import OperationalError

from leaderboard.models import Run
from webapp import leases

log = logging.getLogger(__name__)

# Storage hiccups, and a database that is briefly locked or unreachable, are worth another try.
TRANSIENT_ERRORS = (OSError, TimeoutError, ConnectionError, OperationalError)

GRADINGS = leases.Leased(
    Run,
    "grading of run",
    waiting=Run.Status.PENDING,
    working=Run.Status.GRADING,
    failed=Run.Status.FAILED,
    lease_s=lambda: settings.GRADING_LEASE_S,
    owner="grading_owner",
    expires="grading_lease_expires_at",
    attempts="grading_attempts",
)


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

"""Celery tasks of the leaderboard: grading uploaded runs and their submission snapshots.

Tasks take ids. A run is claimed with a conditional UPDATE (pending -> grading) so two workers never
grade the same run; transient failures (storage hiccups) are retried a bounded number of times,
anything else marks the run failed with the reason.
"""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import OperationalError

from leaderboard.models import Run, Snapshot

log = logging.getLogger(__name__)

# Storage hiccups, and a database that is briefly locked or unreachable, are worth another try.
TRANSIENT_ERRORS = (OSError, TimeoutError, ConnectionError, OperationalError)
MAX_RETRIES = 3


def _claim(run_id: int) -> bool:
    return Run.objects.filter(pk=run_id, status=Run.Status.PENDING).update(status=Run.Status.GRADING) == 1


def _fail(run_id: int, message: str) -> None:
    Run.objects.filter(pk=run_id).update(status=Run.Status.FAILED, grading_error=message[:5000])


@shared_task(
    bind=True,
    max_retries=MAX_RETRIES,
    soft_time_limit=min(settings.CELERY_TASK_SOFT_TIME_LIMIT, 1800),
    time_limit=min(settings.CELERY_TASK_TIME_LIMIT, 1900),
    acks_late=True,
)
def grade_run(self, run_id: int) -> str:
    """Grade one pending run; returns the status it ended in (or why nothing was done)."""
    from leaderboard.services import grade_stored_run

    try:
        claimed = _claim(run_id)
    except OperationalError as exc:  # nothing was changed: the run is still pending
        if self.request.retries >= MAX_RETRIES:
            raise
        raise self.retry(exc=exc, countdown=10 * 2**self.request.retries) from exc
    if not claimed:
        return "not pending"
    run = Run.objects.select_related("competition").get(pk=run_id)
    try:
        grade_stored_run(run)
    except SoftTimeLimitExceeded:
        _fail(run_id, "grading took longer than its time limit")
        return Run.Status.FAILED
    except TRANSIENT_ERRORS as exc:
        if self.request.retries >= MAX_RETRIES:
            _fail(run_id, f"grading failed after {MAX_RETRIES} retries: {exc}")
            return Run.Status.FAILED
        Run.objects.filter(pk=run_id, status=Run.Status.GRADING).update(status=Run.Status.PENDING)
        raise self.retry(exc=exc, countdown=10 * 2**self.request.retries) from exc
    except Exception as exc:  # noqa: BLE001 - permanent: record why, never retry
        log.exception("grading run %s failed", run_id)
        _fail(run_id, f"{exc.__class__.__name__}: {exc}")
        return Run.Status.FAILED
    return run.status


@shared_task(
    bind=True,
    max_retries=MAX_RETRIES,
    soft_time_limit=min(settings.CELERY_TASK_SOFT_TIME_LIMIT, 1800),
    time_limit=min(settings.CELERY_TASK_TIME_LIMIT, 1900),
    acks_late=True,
)
def grade_snapshot(self, snapshot_id: int) -> str:
    """Grade one pending snapshot (leaderboard.snapshots), claimed like a run; returns its status."""
    from leaderboard.snapshots import grade_stored_snapshot

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

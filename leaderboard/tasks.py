"""Celery tasks of the leaderboard: grading uploaded runs and their submission snapshots. Thin entry points: the
claim and the work are leaderboard.runs.grading_claims'; nothing imports this module but the worker.

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
from django.conf import settings
from django.db import OperationalError

from leaderboard.models import Run, Snapshot
from leaderboard.runs.grading_claims import TRANSIENT_ERRORS, claim_grading, grade_claimed
from leaderboard.runs.intake import import_intake  # noqa: F401 - every worker registers it (Celery finds tasks.py)
from leaderboard.trust.tasks import review_run_task  # noqa: F401 - the same
from webapp import queue

log = logging.getLogger(__name__)

MAX_RETRIES = 3
# Grading a run and grading one of its snapshots run under the same limits and late acknowledgement.
GRADING_TASK = {
    "max_retries": MAX_RETRIES, "acks_late": True,
    "soft_time_limit": min(settings.CELERY_TASK_SOFT_TIME_LIMIT, 1800),
    "time_limit": min(settings.CELERY_TASK_TIME_LIMIT, 1900),
}


def _claim(run_id: int, owner: str) -> bool:
    return claim_grading(run_id, owner)


def _is_research_trace(run_id: int) -> bool:
    """An imported trace, or a remote runner's research job run: both scored by the task's eval.py."""
    from leaderboard.runs.research_traces import is_remote_job_to_score, is_trace_to_score

    run = Run.objects.filter(pk=run_id, status=Run.Status.PENDING).select_related("competition").first()
    return run is not None and (is_trace_to_score(run) or is_remote_job_to_score(run))


@shared_task(name=queue.GRADE_RUN, bind=True, reject_on_worker_lost=True, **GRADING_TASK)
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


@shared_task(name=queue.GRADE_SNAPSHOT, bind=True, **GRADING_TASK)
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


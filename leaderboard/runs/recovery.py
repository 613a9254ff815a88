"""The grading half of the periodic sweep: no run is stuck pending or grading, none graded twice.

- An expired grading claim (the worker died mid-grading: its lease, renewed while it grades, ran out)
  goes back to pending and is enqueued again, until GRADING_MAX_ATTEMPTS claims were lost; then the
  run fails with the reason (webapp.leases.sweep_expired).
- A pending run that was never enqueued (the broker was down at upload time), or whose message
  was lost, is enqueued again once it has waited STALE_PENDING_S.
- A pending run on a research task (an imported MLAgentBench trace) is asked of a runner instead
  (leaderboard.runs.research_traces), by the task's name.
- So is a pending snapshot (`sweep_snapshots`): one stored while the broker was down stays pending
  with no message to grade it. It is published again after STALE_PENDING_S, then at most once per
  STALE_PENDING_S; its grading claims a pending snapshot once, so a repeat grades nothing twice.

Every change is a conditional UPDATE on the state it read, so several workers sweeping at once
is safe: one of them wins each change, the others match no row.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from leaderboard.models import Run, Snapshot
from webapp import leases, queue

log = logging.getLogger(__name__)


def sweep_grading() -> dict[str, int]:
    return {**_expired_claims(), "requeued_pending": _stale_pending()}


def sweep_snapshots() -> dict[str, int]:
    cutoff = timezone.now() - timedelta(seconds=settings.STALE_PENDING_S)
    stale = Snapshot.objects.filter(status=Snapshot.Status.PENDING, created_at__lt=cutoff).filter(
        Q(grading_enqueued_at__isnull=True) | Q(grading_enqueued_at__lt=cutoff))
    rows = stale.values_list("pk", "grading_enqueued_at")
    return {"snapshots_requeued": sum(_enqueue_once(Snapshot, pk, at, queue.GRADE_SNAPSHOT) for pk, at in rows)}


def _expired_claims() -> dict[str, int]:
    from leaderboard.runs.grading_claims import GRADINGS

    return leases.sweep_expired(
        GRADINGS, max_attempts=settings.GRADING_MAX_ATTEMPTS,
        retry=lambda run: {"grading_enqueued_at": None, "grading_error": (
            f"grading attempt {run.grading_attempts} was interrupted (the worker grading it was lost); retrying")},
        give_up=lambda run: {"grading_error": (
            f"grading was interrupted {run.grading_attempts} times (the worker grading it was lost); gave up")},
        rows=Run.objects.only("pk", "status", "grading_owner", "grading_attempts"),
    )


def _stale_pending() -> int:
    cutoff = timezone.now() - timedelta(seconds=settings.STALE_PENDING_S)
    stale = Run.objects.filter(status=Run.Status.PENDING).filter(
        Q(grading_enqueued_at__isnull=True, updated_at__lt=cutoff)
        | Q(grading_enqueued_at__isnull=True, grading_attempts__gt=0)
        | Q(grading_enqueued_at__lt=cutoff)
    )
    # A pending run on a research task is an imported trace waiting for a runner's eval.py
    rows = stale.values_list("pk", "grading_enqueued_at", "competition__kind")
    research = {"queue": settings.RESEARCH_BASELINE_QUEUE}
    return sum(_enqueue_once(Run, run_id, enqueued_at, queue.SCORE_TRACE, **research) if kind == "research"
               else _enqueue_once(Run, run_id, enqueued_at, queue.GRADE_RUN)
               for run_id, enqueued_at, kind in rows)


def _enqueue_once(model: type[Run] | type[Snapshot], pk: int, enqueued_at, task_name: str, **options) -> bool:
    """Enqueue the grading of a pending run or snapshot unless another sweeper just did (it moved
    grading_enqueued_at first)."""
    now = timezone.now()
    if model.objects.filter(pk=pk, status=model.Status.PENDING, grading_enqueued_at=enqueued_at).update(
        grading_enqueued_at=now
    ) != 1:
        return False
    try:
        queue.send(task_name, [pk], **options)
    except Exception as exc:  # noqa: BLE001 - the broker is still down: try again next sweep
        log.warning("sweep: could not enqueue grading of %s %s: %s", model._meta.model_name, pk, exc)
        model.objects.filter(pk=pk, grading_enqueued_at=now).update(grading_enqueued_at=enqueued_at)
        return False
    return True

"""The job half of the periodic sweep (webapp.maintenance joins it to the grading's, the uploads' and
the orphaned files').

- A running task whose lease expired (its runner was killed, hung or lost the database) goes back
  to the queue with its attempt counted, or, after max_attempts, fails with the reason; its run
  keeps the steps streamed so far and gets the last log tail as an artifact.
- A task whose agent had finished (grading) when its lease expired ends as it was: its outputs are
  stored and the grading sweep takes care of its run.
- A task of a cancelled job is never started again: a lost running one ends cancelled instead of
  going back to the queue, and queued ones end cancelled (the claim refuses them too).
- Queued tasks that were never published (the broker was down) are published again.
- GPUs held by tasks that no longer run are freed.
All changes are conditional UPDATEs on the state read, so concurrent sweepers are safe.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from leaderboard.models import Artifact, Run
from runner.leases import cancel_queued
from runner.models import GpuSlot, JobTask

log = logging.getLogger(__name__)


def sweep_tasks() -> dict[str, int]:
    counts = {"tasks_requeued": 0, "tasks_failed": 0, "tasks_ended": 0, "tasks_cancelled": 0, "tasks_published": 0}
    now = timezone.now()
    for task in JobTask.objects.filter(
        status__in=(JobTask.Status.RUNNING, JobTask.Status.GRADING), lease_expires_at__lt=now
    ).select_related("runner", "job"):
        counts[_recover(task, now)] += 1
    counts["tasks_cancelled"] += cancel_queued(JobTask.objects.filter(job__cancel_requested=True))
    counts["tasks_published"] = _publish_unsent(now)
    GpuSlot.objects.exclude(task__status__in=(JobTask.Status.RUNNING, JobTask.Status.GRADING)).exclude(
        task__isnull=True
    ).update(task=None)
    return counts


def _recover(task: JobTask, now) -> str:
    same = JobTask.objects.filter(pk=task.pk, status=task.status, lease_owner=task.lease_owner,
                                  lease_expires_at__lt=now)
    where = f" on {task.runner.name}" if task.runner else ""
    if task.status == JobTask.Status.GRADING:
        same.update(status=JobTask.Status.FAILED if task.error else JobTask.Status.SUCCEEDED,
                    lease_expires_at=None, finished_at=now)
        return "tasks_ended"
    if task.job.cancel_requested:
        with transaction.atomic():
            why = f"cancelled; the runner{where} was lost before it stopped the sandbox (partial logs kept)"
            if same.update(status=JobTask.Status.CANCELLED, lease_expires_at=None, finished_at=now, error=why):
                _fail_run(task, why)
        return "tasks_cancelled"
    if task.attempts >= task.max_attempts:
        with transaction.atomic():
            why = (f"the runner{where} was lost during attempt {task.attempts} of {task.max_attempts} "
                   "(no lease renewal); gave up, partial logs kept")
            if same.update(status=JobTask.Status.FAILED, lease_expires_at=None, finished_at=now, error=why):
                _fail_run(task, why)
        return "tasks_failed"
    if same.update(status=JobTask.Status.QUEUED, lease_owner="", lease_expires_at=None, enqueued_at=None,
                   error=f"attempt {task.attempts}{where} was lost (no lease renewal); re-queued"):
        transaction.on_commit(lambda: _publish(task.pk))
    return "tasks_requeued"


def _fail_run(task: JobTask, why: str) -> None:
    from leaderboard.runs.job_runs import store_file

    if task.run_id is None:
        return
    run = Run.objects.get(pk=task.run_id)
    if task.log_tail:
        store_file(run, Artifact.Kind.LOG, "logs/agent-output-tail.log",
                   ContentFile(task.log_tail.encode(), name="agent-output-tail.log"))
    Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(
        status=Run.Status.FAILED, grading_error=why, finished_at=timezone.now()
    )


def _publish(task_id: int) -> bool:
    from runner.services import enqueue_task

    return enqueue_task(task_id)


def _publish_unsent(now) -> int:
    """Queued tasks whose publication failed (enqueued_at stays empty) after a short grace."""
    grace = now - timedelta(seconds=min(settings.STALE_PENDING_S, 30))
    unsent = JobTask.objects.filter(status=JobTask.Status.QUEUED, enqueued_at__isnull=True, created_at__lt=grace)
    return sum(_publish(task_id) for task_id in unsent.values_list("pk", flat=True))

"""The job half of the periodic sweep (webapp.maintenance joins it to the grading's, the uploads' and
the orphaned files').

- A running task whose lease expired (its runner was killed, hung or lost the database) goes back
  to the queue with its attempt counted, or, after max_attempts, fails with the reason; its run
  keeps the steps streamed so far and gets the last log tail as an artifact.
- A task whose agent had finished (grading) when its lease expired ends as it was: its outputs are
  stored and the grading sweep takes care of its run.
- A task of a cancelled job is never started again: a lost running one ends cancelled instead of
  going back to the queue, and queued ones end cancelled (the claim refuses them too).
- GPUs held by tasks that no longer run are freed.
All changes are conditional UPDATEs on the state read, so concurrent sweepers are safe.
"""

from __future__ import annotations

import logging

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from leaderboard.models import Artifact, Run
from runner.jobs.task_leases import JOB_TASKS, cancel_queued
from runner.models import GpuSlot, JobTask
from webapp import leases

log = logging.getLogger(__name__)


def sweep_tasks() -> dict[str, int]:
    counts = {"tasks_requeued": 0, "tasks_failed": 0, "tasks_ended": 0, "tasks_cancelled": 0}
    now = timezone.now()
    expired = leases.expired(JOB_TASKS, now=now).select_related("runner", "job")
    for task in expired.filter(status=JobTask.Status.GRADING):
        counts["tasks_ended"] += _end_graded(task, now)
    for task in expired.filter(status=JobTask.Status.RUNNING, job__cancel_requested=True):
        counts["tasks_cancelled"] += _cancel_lost(task, now)
    lost = leases.sweep_expired(
        JOB_TASKS, max_attempts=lambda task: task.max_attempts, retry=_retry, give_up=_give_up, then=_after_lost,
        rows=JobTask.objects.filter(status=JobTask.Status.RUNNING, job__cancel_requested=False)
        .select_related("runner", "job"),
    )
    counts["tasks_requeued"], counts["tasks_failed"] = lost["retried"], lost["failed"]
    counts["tasks_cancelled"] += cancel_queued(JobTask.objects.filter(job__cancel_requested=True))
    GpuSlot.objects.exclude(task__status__in=(JobTask.Status.RUNNING, JobTask.Status.GRADING)).exclude(
        task__isnull=True
    ).update(task=None)
    return counts


def _where(task: JobTask) -> str:
    return f" on {task.runner.name}" if task.runner else ""


def _end_graded(task: JobTask, now) -> bool:
    """The agent had finished (its outputs are stored): the task ends as it was; the grading sweep
    takes care of its run."""
    status = JobTask.Status.FAILED if task.error else JobTask.Status.SUCCEEDED
    return leases.take_over(JOB_TASKS, task, now, status, finished_at=now)


def _cancel_lost(task: JobTask, now) -> bool:
    why = f"cancelled; the runner{_where(task)} was lost before it stopped the sandbox (partial logs kept)"
    with transaction.atomic():
        if not leases.take_over(JOB_TASKS, task, now, JobTask.Status.CANCELLED, finished_at=now, error=why):
            return False
        _fail_run(task, why)
    return True


def _retry(task: JobTask) -> dict:
    return {"error": f"attempt {task.attempts}{_where(task)} was lost (no lease renewal); re-queued"}


def _give_up(task: JobTask) -> dict:
    return {"finished_at": timezone.now(), "error": (
        f"the runner{_where(task)} was lost during attempt {task.attempts} of {task.max_attempts} "
        "(no lease renewal); gave up, partial logs kept")}


def _after_lost(task: JobTask, gave_up: bool) -> None:
    if gave_up:  # one handed on waits in the queue for a runner's claim
        _fail_run(task, _give_up(task)["error"])


def _fail_run(task: JobTask, why: str) -> None:
    from leaderboard.runs.job_runs import fail_job_run, store_file

    if task.run_id is None:
        return
    run = Run.objects.get(pk=task.run_id)
    if task.log_tail:
        store_file(run, Artifact.Kind.LOG, "logs/agent-output-tail.log",
                   ContentFile(task.log_tail.encode(), name="agent-output-tail.log"))
    fail_job_run(run.pk, why, while_in=(Run.Status.RUNNING,))

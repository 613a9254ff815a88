"""What a job and each of its tasks are, in one word for machines (`status`) and in words for people
(`state`), derived here once from the tasks and their runs' grading: the job page, the job list, the
API, and `submit_job --wait` all read them from this module. The status words themselves live here
too (`JobStatus`, `TaskStatus`; the models name them `Job.Status` and `JobTask.Status`), so this module
needs nothing of the models but their shape, and the models' properties call it.

A task ends two ways at once: how its agent stopped (succeeded, failed, timed out, cancelled) and
whether its run's submission was scored. The submission decides the outcome, as in MLE-bench: an agent
that timed out after writing a gold submission ran a scored run, and its job did not fail. A job whose
runs were not scored never says plain "succeeded": its state counts them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.db.models import TextChoices

if TYPE_CHECKING:
    from runner.models import JobTask


class JobStatus(TextChoices):
    """A job's status, derived from its tasks (`job_status`), never stored (Job.Status)."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class TaskStatus(TextChoices):
    """A task's stored status (JobTask.Status)."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    GRADING = "grading", "Grading"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    TIMED_OUT = "timed_out", "Timed out"
    CANCELLED = "cancelled", "Cancelled"


AGENT_ENDINGS = {
    TaskStatus.SUCCEEDED: "succeeded",
    TaskStatus.FAILED: "agent failed",
    TaskStatus.TIMED_OUT: "timed out",
}


def derive_status(task_statuses: list[str]) -> str:
    """A job is running while any task is, queued while all wait, else how its tasks ended."""
    states = set(task_statuses)
    active = {TaskStatus.RUNNING, TaskStatus.GRADING}
    if states & active or (TaskStatus.QUEUED in states and len(states) > 1):
        return JobStatus.RUNNING
    if not states or states == {TaskStatus.QUEUED}:
        return JobStatus.QUEUED
    if states <= {TaskStatus.SUCCEEDED}:
        return JobStatus.SUCCEEDED
    if TaskStatus.CANCELLED in states and not states & {TaskStatus.FAILED, TaskStatus.TIMED_OUT}:
        return JobStatus.CANCELLED
    return JobStatus.FAILED


def scored(run) -> bool:
    """The run's submission was graded to a score (the only outcome that counts on the board)."""
    return run is not None and run.status == run.Status.GRADED and run.score is not None


def grading_over(run) -> bool:
    """Nothing more will happen to the run's grade: graded, failed, or waiting for answers."""
    return run is None or run.status in (run.Status.GRADED, run.Status.FAILED, run.Status.WAITING)


def unscored_reason(run) -> str | None:
    """A run whose grading ended without a score says why (no grader, no answers, an invalid file);
    None while it is still being graded or once it has a score."""
    if run is None or not grading_over(run) or scored(run):
        return None
    reason = run.grading_error or (run.grading_report or {}).get("note") or ""
    state = run.progress if run.status == run.Status.FAILED else run.state
    if not reason or reason in state:
        return state
    return reason if reason.startswith(state) else f"{state}: {reason}"


def task_status(task: JobTask) -> str:
    """The task's status as its job counts it: an agent that failed or timed out but left a scored
    submission counts as succeeded."""
    if task.status in (TaskStatus.FAILED, TaskStatus.TIMED_OUT) and scored(task.run):
        return TaskStatus.SUCCEEDED
    return task.status


def task_state(task: JobTask) -> str:
    """One task in words: how its agent stopped, then what became of its submission."""
    if task.status in (TaskStatus.QUEUED, TaskStatus.RUNNING, TaskStatus.CANCELLED):
        return TaskStatus(task.status).label.lower()
    if task.status == TaskStatus.GRADING or not grading_over(task.run):
        return "grading"
    ending = AGENT_ENDINGS[task.status]
    if scored(task.run):
        return "graded" if task.status == TaskStatus.SUCCEEDED else f"{ending}, submission graded"
    return f"{ending}, not scored"


def job_status(tasks: Iterable[JobTask]) -> str:
    """The job's status (Job.Status): running while any task is, else how its tasks ended, each
    counted by task_status."""
    return derive_status([task_status(t) for t in tasks])


def job_state(tasks: Iterable[JobTask]) -> str:
    """The job in words: its status, and once it ended how many of its runs were not scored."""
    tasks = list(tasks)
    status = job_status(tasks)
    if status in (JobStatus.QUEUED, JobStatus.RUNNING):
        return status
    ended = [t for t in tasks if t.status != TaskStatus.CANCELLED]
    unscored = sum(not scored(t.run) for t in ended)
    if status == JobStatus.CANCELLED:
        return status if not ended else f"cancelled, {len(ended) - unscored} of {len(tasks)} runs scored"
    if not unscored:
        return status
    word = "finished" if status == JobStatus.SUCCEEDED else status
    return f"{word}, {unscored} of {len(tasks)} run{'s' if len(tasks) != 1 else ''} not scored"


def not_scored(tasks: Iterable[JobTask]) -> int:
    """The job's runs whose grading ended without a score (for the job list)."""
    return sum(unscored_reason(t.run) is not None for t in tasks)

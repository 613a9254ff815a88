"""What a job and each of its tasks are, in one word for machines (`status`) and in words for people
(`state`), derived here once from the tasks and their runs' grading: the job page, the job list, the
API, and `submit_job --wait` all read them from this module.

A task ends two ways at once: how its agent stopped (succeeded, failed, timed out, cancelled) and
whether its run's submission was scored. The submission decides the outcome, as in MLE-bench: an agent
that timed out after writing a gold submission ran a scored run, and its job did not fail. A job whose
runs were not scored never says plain "succeeded": its state counts them.
"""

from __future__ import annotations

from collections.abc import Iterable

from runner.models import Job, JobTask, derive_status

AGENT_ENDINGS = {
    JobTask.Status.SUCCEEDED: "succeeded",
    JobTask.Status.FAILED: "agent failed",
    JobTask.Status.TIMED_OUT: "timed out",
}


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
    if task.status in (JobTask.Status.FAILED, JobTask.Status.TIMED_OUT) and scored(task.run):
        return JobTask.Status.SUCCEEDED
    return task.status


def task_state(task: JobTask) -> str:
    """One task in words: how its agent stopped, then what became of its submission."""
    if task.status in (JobTask.Status.QUEUED, JobTask.Status.RUNNING, JobTask.Status.CANCELLED):
        return JobTask.Status(task.status).label.lower()
    if task.status == JobTask.Status.GRADING or not grading_over(task.run):
        return "grading"
    ending = AGENT_ENDINGS[task.status]
    if scored(task.run):
        return "graded" if task.status == JobTask.Status.SUCCEEDED else f"{ending}, submission graded"
    return f"{ending}, not scored"


def job_status(tasks: Iterable[JobTask]) -> str:
    """The job's status (Job.Status): running while any task is, else how its tasks ended, each
    counted by task_status."""
    return derive_status([task_status(t) for t in tasks])


def job_state(tasks: Iterable[JobTask]) -> str:
    """The job in words: its status, and once it ended how many of its runs were not scored."""
    tasks = list(tasks)
    status = job_status(tasks)
    if status in (Job.Status.QUEUED, Job.Status.RUNNING):
        return status
    ended = [t for t in tasks if t.status != JobTask.Status.CANCELLED]
    unscored = sum(not scored(t.run) for t in ended)
    if status == Job.Status.CANCELLED:
        return status if not ended else f"cancelled, {len(ended) - unscored} of {len(tasks)} runs scored"
    if not unscored:
        return status
    word = "finished" if status == Job.Status.SUCCEEDED else status
    return f"{word}, {unscored} of {len(tasks)} run{'s' if len(tasks) != 1 else ''} not scored"


def not_scored(tasks: Iterable[JobTask]) -> int:
    """The job's runs whose grading ended without a score (for the job list)."""
    return sum(unscored_reason(t.run) is not None for t in tasks)

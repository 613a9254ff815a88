"""The run row of a job task through its life: made at the task's first claim, restarted by a later
attempt, its end recorded, failed, or held for the research grading side. `leaderboard.runs.job_runs`
(the runner's one door) re-exports these; nothing else of the runner writes a Run.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from leaderboard.models import Run

UNFINISHED = (Run.Status.RUNNING, Run.Status.PENDING)


def start_job_run(*, experiment, competition, seed: int, owner, private: bool) -> Run:
    """The run of a job task, made once, at its first claim: running, verified (the site's runner ran it)."""
    return Run.objects.create(
        experiment=experiment,
        competition=competition,
        task_name=competition.slug,
        seed=seed,
        owner=owner,
        is_private=private,
        origin=Run.Origin.JOB,
        status=Run.Status.RUNNING,
        verification=Run.Verification.VERIFIED,
        started_at=timezone.now(),
    )


def restart_job_run(run: Run, *, attempt: int) -> Run:
    """The run started afresh for another attempt: the previous attempt's files go (once committed)."""
    names = [a.file.name for a in run.artifacts.all() if a.file]
    run.artifacts.all().delete()
    transaction.on_commit(lambda: [default_storage.delete(name) for name in names])
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.RUNNING,
        started_at=timezone.now(),
        finished_at=None,
        score=None,
        submission_exists=False,
        valid_submission=False,
        grading_report={},
        n_steps=0,
        grading_error=f"attempt {attempt}: re-running after the previous attempt was lost",
    )
    run.refresh_from_db()
    return run


def record_job_end(run: Run, *, agent_started_at: datetime | None, has_submission: bool, notes: Iterable[str]) -> None:
    """The run's start and duration are the runner's: from the agent's start to now; a sandbox that
    never started has no duration. `notes` join the run's import warnings."""
    finished = timezone.now()
    Run.objects.filter(pk=run.pk).update(
        submission_exists=has_submission,
        finished_at=finished,
        started_at=agent_started_at or run.started_at,
        duration_s=(finished - agent_started_at).total_seconds() if agent_started_at else None,
        import_warnings=[*run.import_warnings, *notes],
    )


def record_usage(run: Run, usage: dict) -> None:
    """The gateway's metered tokens and cost (runner.jobs.llm_usage: the run's usage columns)."""
    Run.objects.filter(pk=run.pk).update(**usage)


def fail_job_run(run_id: int, why: str, *, while_in: Iterable[str] | None = UNFINISHED) -> None:
    """The run failed, saying why, with no score; only while its status is one of `while_in` (None: any),
    so a run that already ended stays as it is."""
    runs = Run.objects.filter(pk=run_id)
    if while_in is not None:
        runs = runs.filter(status__in=tuple(while_in))
    runs.update(status=Run.Status.FAILED, grading_error=why[:5000], finished_at=timezone.now())


def record_invalid_submission(run: Run, problem: str, *, only_if_graded: bool = False) -> None:
    """A submission.csv that was not a regular file (or too large to store) is an invalid submission,
    with the reason, rather than no submission at all. `only_if_graded`: only over a grade already
    recorded (a run whose grading is still pending keeps waiting for it)."""
    runs = Run.objects.filter(pk=run.pk)
    if only_if_graded:
        runs = runs.filter(status=Run.Status.GRADED)
    runs.update(
        status=Run.Status.GRADED,
        submission_exists=True,
        valid_submission=False,
        score=None,
        grading_error=problem[:5000],
    )


def hold_for_research_scoring(run: Run, grading_report: dict) -> None:
    """The finished research run waits, pending, for the research grading side (its task's eval.py)."""
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.PENDING, grading_enqueued_at=None, grading_report=grading_report
    )

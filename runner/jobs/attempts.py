"""A job task's attempt on its run, the site's side, whichever runner runs it: the run made (or
started afresh) when the task is claimed, the redactor of the job's secrets, the model its metered LLM
calls settle, and the run's end recorded with its final trajectory. The run's row is written through
`leaderboard.runs.job_runs` only."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from django.db import transaction

from leaderboard.models import Run
from leaderboard.runs import job_runs
from runner.gateway import STEPS_FILE
from runner.host.outputs import TRAJECTORY_FILE, Stored
from runner.host.secrets import Redactor
from runner.jobs import task_leases
from runner.jobs.services import NO_MODEL
from runner.jobs.task_leases import Claim
from runner.models import Job, JobTask


def prepare_run(held: Claim, task: JobTask) -> Run:
    """The task's Run, created on the first attempt; a later attempt starts it afresh."""
    job = task.job
    with transaction.atomic():
        task_leases.fence(held, agent_started_at=None)  # a previous attempt's start is not this one's
        if task.run is not None:
            return job_runs.restart_job_run(task.run, attempt=held.attempt)
        run = job_runs.start_job_run(
            experiment=job.experiment,
            competition=task.competition,
            seed=task.seed,
            owner=job.created_by,
            private=job.private,
        )
        task_leases.fence(held, run=run)
    return run


def fail(held: Claim, why: str) -> None:
    """The attempt cannot run anywhere as it is: the task and its run (if it has one yet) fail, saying why."""
    with transaction.atomic():
        task_leases.finish(held, JobTask.Status.FAILED, error=why[:5000])
        run_id = JobTask.objects.values_list("run_id", flat=True).get(pk=held.pk)
        if run_id is not None:
            job_runs.fail_job_run(run_id, why)


def redactor_for(job: Job, sandbox_secrets: Iterable[str] = ()) -> Redactor:
    """The job's secrets (the real provider keys among them) and what the sandbox held in their place."""
    return Redactor([*job.secrets().values(), *sandbox_secrets])


def settle_model(run: Run, job: Job, seen: dict[str, int]) -> str:
    """The run's model is the one its metered LLM calls went to (`seen`: model -> calls;
    leaderboard.runs.job_runs.settle_model); a job that named none follows its run to that model's
    experiment. Returns the note on the run, if any."""
    note = job_runs.settle_model(run, named=job.model_name, seen=seen, unnamed=NO_MODEL)
    if not job.model_name and run.experiment_id != job.experiment_id:
        Job.objects.filter(pk=job.pk, experiment_id=job.experiment_id).update(experiment_id=run.experiment_id)
    return note


def record_end(run: Run, task: JobTask, stored: Stored, notes: list[str], llm_steps: Path | None = None) -> None:
    """The run's end (clock, submission, notes) and its trajectory as the importer reads the stored
    (redacted, whole) copy, with the LLM gateway's steps, on the clock of the agent's start. A
    trajectory that was cut keeps the steps streamed live, the gateway's among them."""
    job_runs.record_job_end(
        run,
        agent_started_at=task.agent_started_at,
        has_submission=stored.has_submission or bool(stored.submission_problem),
        notes=notes,
    )
    if not stored.trajectory_cut:
        job_runs.save_final_trajectory(
            run,
            ((stored.trajectory, TRAJECTORY_FILE),),
            (llm_steps, STEPS_FILE),
            agent_started_at=task.agent_started_at,
        )

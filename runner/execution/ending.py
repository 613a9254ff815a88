"""After a job's sandbox ends: store what the agent left (runner.host.outputs: regular files only, bounded,
the job's secrets redacted), replace the live trajectory with the stored copy as the importer reads
it, followed by the LLM gateway's steps, then grade the run (or finish a research run) and end the
task. runner.execution.supervisor calls `end` whichever way the sandbox stopped, or failed to start.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from django.core.files import File
from django.db import transaction

from leaderboard.models import Run
from leaderboard.runs import job_runs
from runner.backends import Backend, SandboxSpec
from runner.gateway import STEPS_FILE
from runner.host import llm_access
from runner.host.output_budget import Budget
from runner.host.outputs import FileRefused, Limits, Stored, collect_outputs
from runner.host.secrets import Redactor
from runner.jobs import attempts, llm_usage, task_leases
from runner.jobs.task_leases import Claim
from runner.models import Job, JobTask
from runner.research import site as research_site
from webapp.leases import Heartbeat

if TYPE_CHECKING:
    from runner.execution.supervisor import Outcome, Supervisor


def end(held: Claim, run: Run, outcome: Outcome, spec: SandboxSpec, access: llm_access.LlmAccess | None,
        notes: list[str] = (), *, backend: Backend, supervisor: Supervisor | None = None) -> Outcome:
    """Store what the agent left, then grade it (unless cancelled) and end the task."""
    task = JobTask.objects.select_related("job").get(pk=held.pk)
    job = task.job
    redactor = redactor_for(job, access)
    report = llm_access.finish(access) if access is not None else None
    usage, llm_note = llm_usage.usage_and_note(report)
    error = llm_usage.with_note(outcome.error, usage, llm_note)
    with transaction.atomic():
        task_leases.fence(held, status=JobTask.Status.GRADING, error=redactor.text(error)[:5000])
        stored = store_outputs(run, spec, redactor, spent=supervisor.snapshots.budget if supervisor else None)
        problem = [stored.submission_problem] if stored.submission_problem else []
        # store_outputs redacted its own notes; the supervisor's and the gateway's are redacted here
        model_note = attempts.settle_model(run, job, llm_usage.models_called(report))
        attempts.record_end(run, task, stored, [*(redactor.text(note) for note in notes if note), *stored.notes,
                                                *problem, *([redactor.text(llm_note)] if llm_note else []),
                                                *([model_note] if model_note else [])],
                            _llm_steps(spec, redactor) if usage else None)
        if usage:
            job_runs.record_usage(run, usage)
    if outcome.status == JobTask.Status.CANCELLED:
        job_runs.fail_job_run(run.pk, "cancelled by its job", while_in=None)
    elif not outcome.counted:  # e.g. killed from outside the runner: not graded on its last snapshot
        job_runs.fail_job_run(run.pk, redactor.text(outcome.error), while_in=None)
    elif spec.workspace_dir is not None:
        research_site.finish(run, spec, backend=backend, snapshots=supervisor.research if supervisor else None,
                             status=outcome.status, exit_code=outcome.exit_code, redactor=redactor,
                             elapsed_s=supervisor.elapsed() if supervisor else None,
                             fence=lambda: task_leases.fence(held))
    else:
        with Heartbeat(held):  # the supervisor no longer polls: grading may outlast the lease
            job_runs.grade(run, owner=f"job-task-{held.pk}-{held.owner[:8]}")
        if stored.submission_problem:
            job_runs.record_invalid_submission(run, stored.submission_problem, only_if_graded=True)
    task_leases.finish(held, outcome.status)
    return outcome


def redactor_for(job: Job, access: llm_access.LlmAccess | None) -> Redactor:
    """The job's secrets and what this sandbox held in their place."""
    return attempts.redactor_for(job, access.sandbox_secrets.values() if access is not None else ())


def _llm_steps(spec: SandboxSpec, redactor: Redactor) -> Path | None:
    """The gateway's steps file, redacted (a prompt may quote a pass-through secret), for the import."""
    source = spec.runner_dir / STEPS_FILE
    if not source.is_file():
        return None
    target = spec.runner_dir / f"redacted-{STEPS_FILE}"
    with open(source, "rb") as src, open(target, "wb") as out:
        for chunk in redactor.stream(iter(lambda: src.read(1 << 20), b"")):
            out.write(chunk)
    return target


def store_outputs(run, spec: SandboxSpec, redactor: Redactor, limits: Limits | None = None,
                  spent: Budget | None = None) -> Stored:
    """Store every file the run should keep as its artifacts; returns what was stored and the notes
    on the rest. `spent`: what the run's snapshots already took of its limits (files and bytes)."""
    def store(kind: str, name: str, path: Path) -> None:
        try:
            with open(path, "rb") as f:
                job_runs.store_file(run, kind, name, File(f, name=Path(name).name))
        except job_runs.FileRefused as exc:
            raise FileRefused(str(exc)) from exc

    return collect_outputs(spec, redactor, store, limits, spent, name_chars=job_runs.MAX_NAME_CHARS)

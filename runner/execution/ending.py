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
from django.utils import timezone

from leaderboard.models import Run
from runner.backends import Backend, SandboxSpec
from runner.gateway import STEPS_FILE
from runner.host import llm_access
from runner.host.output_budget import Budget
from runner.host.outputs import TRAJECTORY_FILE, FileRefused, Limits, Stored, collect_outputs
from runner.host.secrets import Redactor
from runner.jobs import llm_usage, task_leases
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
        model_note = _settle_model(run, job, llm_usage.models_called(report))
        _record(run, task, stored, [*(redactor.text(note) for note in notes if note), *stored.notes, *problem,
                              *([redactor.text(llm_note)] if llm_note else []), *([model_note] if model_note else [])])
        _final_trajectory(run, task, stored, _llm_steps(spec, redactor) if usage else None)
        if usage:
            Run.objects.filter(pk=run.pk).update(**usage)
    if outcome.status == JobTask.Status.CANCELLED:
        Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED, grading_error="cancelled by its job",
                                             finished_at=timezone.now())
    elif not outcome.counted:  # e.g. killed from outside the runner: not graded on its last snapshot
        Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED, finished_at=timezone.now(),
                                             grading_error=redactor.text(outcome.error)[:5000])
    elif spec.workspace_dir is not None:
        research_site.finish(run, spec, backend=backend, snapshots=supervisor.research if supervisor else None,
                             status=outcome.status, exit_code=outcome.exit_code, redactor=redactor,
                             elapsed_s=supervisor.elapsed() if supervisor else None,
                             fence=lambda: task_leases.fence(held))
    else:
        with Heartbeat(held):  # the supervisor no longer polls: grading may outlast the lease
            _grade(held, run)
        _mark_invalid(run, stored.submission_problem)
    task_leases.finish(held, outcome.status)
    return outcome


def redactor_for(job: Job, access: llm_access.LlmAccess | None) -> Redactor:
    """The job's secrets (the real provider keys among them) and what the sandbox held in their place."""
    values = list(job.secrets().values())
    if access is not None:
        values += access.sandbox_secrets.values()
    return Redactor(values)


def _settle_model(run: Run, job: Job, seen: dict[str, int]) -> str:
    """The run's model is the one its metered LLM calls went to (`seen`: model -> calls;
    leaderboard.runs.job_runs.settle_model); a job that named none follows its run to that model's
    experiment."""
    from leaderboard.runs.job_runs import settle_model
    from runner.jobs.services import NO_MODEL

    note = settle_model(run, named=job.model_name, seen=seen, unnamed=NO_MODEL)
    if not job.model_name and run.experiment_id != job.experiment_id:
        Job.objects.filter(pk=job.pk, experiment_id=job.experiment_id).update(experiment_id=run.experiment_id)
    return note


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


def _record(run: Run, task: JobTask, stored: Stored, notes: list[str]) -> None:
    """The run's start and duration are the runner's: from the agent's start (JobTask.agent_started_at)
    to now; a sandbox that never started has no duration."""
    finished = timezone.now()
    started = task.agent_started_at
    Run.objects.filter(pk=run.pk).update(
        submission_exists=stored.has_submission or bool(stored.submission_problem), finished_at=finished,
        started_at=started or run.started_at, duration_s=(finished - started).total_seconds() if started else None,
        import_warnings=[*run.import_warnings, *notes],
    )


def _final_trajectory(run: Run, task: JobTask, stored: Stored, llm_steps: Path | None = None) -> None:
    """The trajectory as the importer reads the stored (redacted, whole) copy, with the LLM gateway's
    steps, on the clock of the agent's start; none of its own figures becomes the run's. A trajectory
    that was cut keeps the steps streamed live."""
    from leaderboard.runs.job_runs import save_final_trajectory

    if stored.trajectory_cut:
        return  # the steps streamed live are all there is of it whole (the gateway's among them)
    save_final_trajectory(run, ((stored.trajectory, TRAJECTORY_FILE),), (llm_steps, STEPS_FILE),
                          agent_started_at=task.agent_started_at)


def _mark_invalid(run: Run, problem: str) -> None:
    """A submission.csv that was not a regular file (or too large to store) is an invalid submission,
    with the reason, rather than no submission at all."""
    if problem:
        Run.objects.filter(pk=run.pk, status=Run.Status.GRADED).update(
            submission_exists=True, valid_submission=False, score=None, grading_error=problem)


def _grade(held: Claim, run: Run) -> None:
    """Grade here, with the claim an upload's grading takes. A transient failure leaves the run
    pending: the sweep hands it to the grading queue."""
    from leaderboard.runs.job_runs import grade

    grade(run, owner=f"job-task-{held.pk}-{held.owner[:8]}")


def store_outputs(run, spec: SandboxSpec, redactor: Redactor, limits: Limits | None = None,
                  spent: Budget | None = None) -> Stored:
    """Store every file the run should keep as its artifacts; returns what was stored and the notes
    on the rest. `spent`: what the run's snapshots already took of its limits (files and bytes)."""
    from leaderboard.runs.job_runs import MAX_NAME_CHARS, store_file
    from leaderboard.runs.job_runs import FileRefused as Refused

    def store(kind: str, name: str, path: Path) -> None:
        try:
            with open(path, "rb") as f:
                store_file(run, kind, name, File(f, name=Path(name).name))
        except Refused as exc:
            raise FileRefused(str(exc)) from exc

    return collect_outputs(spec, redactor, store, limits, spent, name_chars=MAX_NAME_CHARS)

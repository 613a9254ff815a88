"""The supervisor: one claimed job task from sandbox start to graded run.

    outcome = execute(task_id, runner=runner, backend=backend)

It creates the Run up front (origin job, status running) so the run page shows it live, gives the
task a scratch folder with a disk quota (runner.host.scratch), starts the sandbox and then, every
JOB_POLL_S: renews the lease, streams the new complete lines of LOGS/trajectory.jsonl into the run's
trajectory, keeps a snapshot each time SUBMISSION/submission.csv changes (runner.host.live), checks for
cancellation and enforces the wall clock and the quota (SIGTERM, SIGKILL after a grace period,
partial output kept). At the end runner.execution.ending stores the submission, logs and code as artifacts
(regular files only, bounded, with the job's secrets redacted), replaces the live trajectory with the
stored copy read by the JSONL importer (the same steps an upload would give), and grades the run with
the same claim and grader as an upload. The sandbox is always removed and the scratch deleted.

Nothing in the sandbox's folders is trusted: every read goes through runner.host.sandbox_files, which
never follows a link, never blocks on a FIFO and never reads past a limit, so the time limit and
cancellation are checked at every tick, whatever the agent left in its folders.

The competition's public data folder is mounted as it is. MLE-bench's prepared folders hold
description.md; when one does not, the supervisor writes the catalogue's description to
CODE/description.md and DESCRIPTION_FILE names whichever exists.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import shutil
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from leaderboard.models import Run
from runner.agents import job_package
from runner.backends import TOOLS_DIR, Backend, BackendUnavailable, SandboxSpec
from runner.execution import ending
from runner.execution.live_steps import TrajectoryStream
from runner.gateway import STEPS_FILE
from runner.host import llm_access, slots
from runner.host.live import SnapshotWatch
from runner.host.outcomes import SIGKILLED, Outcome, sandbox_ended  # noqa: F401 - Outcome and SIGKILLED: named here too
from runner.host.output_budget import Budget
from runner.host.outputs import SUBMISSION_FILE, TRAJECTORY_FILE, Limits
from runner.host.scratch import Scratch
from runner.jobs import attempts, recipes, task_leases
from runner.jobs.llm_usage import load_prices
from runner.jobs.task_leases import Claim, LeaseLost
from runner.models import Job, JobTask, Runner
from runner.research import site as research_site

log = logging.getLogger(__name__)
LOG_TAIL_BYTES = 16_384
LOG_TAIL_EVERY_S = 3.0
OUTPUT_LOG_BYTES = 8 << 20
SNAPSHOT_SHARE = 2  # snapshots' part of the run's output limits: 1/2


# --- the entry point ------------------------------------------------------------------------------


def execute(held: Claim, *, runner: Runner | None, backend: Backend) -> Outcome:
    """Run the claimed task to its end. Raises BackendUnavailable (the task was handed back to the
    queue: retry later) and LeaseLost (someone else owns it now: do nothing more)."""
    task = JobTask.objects.select_related("job__agent", "job__experiment", "job__created_by", "competition").get(
        pk=held.pk
    )
    try:
        backend.check()
    except BackendUnavailable as exc:
        task_leases.release(held, error=f"{backend.name} unavailable: {exc}")
        raise
    gpus = task_leases.take_gpus(held, runner, task.job.gpus, task.job.gpu_type) if task.job.gpus else []
    run = attempts.prepare_run(held, task)
    scratch = _scratch(task, held)
    access = None
    try:
        access = llm_access.prepare(task.job.settings, task.job.secrets(), prices=load_prices)
        spec = _spec(held, task, backend, gpus, scratch, access.sandbox_secrets)
        spec = llm_access.start(access, spec, backend.name, backend.paths(spec).tools)
        return _execute(held, task, run, spec, backend, scratch, access)
    finally:
        if access is not None and access.gateway is not None:
            access.gateway.stop()
        scratch.delete()
        shutil.rmtree(scratch.path.parent / f"{scratch.path.name}.runner", ignore_errors=True)


def _execute(held: Claim, task: JobTask, run: Run, spec: SandboxSpec, backend: Backend, scratch: Scratch,
             access: llm_access.LlmAccess) -> Outcome:
    # before the start: hashing the data is not the agent's time (the lease is renewed meanwhile)
    recipe = recipes.build(task, spec, backend, tick=lambda: task_leases.fence(held))
    if Job.objects.filter(pk=task.job_id, cancel_requested=True).exists():  # meanwhile: never start it
        return ending.end(held, run, Outcome(JobTask.Status.CANCELLED, "cancelled before its sandbox started"),
                          spec, access, backend=backend)
    try:
        sandbox = backend.start(spec)
    except BackendUnavailable as exc:
        task_leases.free_gpus(held.pk)
        task_leases.release(held, error=f"{backend.name} unavailable: {exc}")
        raise
    except Exception as exc:  # noqa: BLE001 - ImageNotFound, StartFailed: permanent, say which
        return ending.end(held, run, Outcome(JobTask.Status.FAILED, f"{exc.__class__.__name__}: {exc}"), spec,
                          access, backend=backend)
    try:
        _record_start(held, run, recipe, access)
        supervisor = Supervisor(held, task, run, spec, sandbox, scratch, access)
        outcome = supervisor.watch()
    except LeaseLost:
        _stop(sandbox)
        raise
    finally:
        _keep_output(sandbox)
        sandbox.remove()
    return ending.end(held, run, outcome, spec, access, supervisor.notes(), backend=backend, supervisor=supervisor)


def _record_start(held: Claim, run: Run, recipe: dict, access: llm_access.LlmAccess) -> None:
    """The agent's start: the run's one clock, which the gateway's steps count from too."""
    from leaderboard.runs.job_runs import record_recipe

    started = timezone.now()
    with transaction.atomic():
        task_leases.fence(held, agent_started_at=started)
        record_recipe(run, recipe)
    if access.gateway is not None:
        access.gateway.recorder.count_from(started.timestamp())


def _keep_output(sandbox) -> None:
    """The agent's stdout and stderr in the runner's own folder, where the backend did not write it
    there itself (Docker keeps it with the container, which is about to go)."""
    path = sandbox.spec.host_output_log
    if path.exists():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sandbox.output_tail(OUTPUT_LOG_BYTES))
    except Exception:  # noqa: BLE001 - the log tail on the task still has the end of it
        log.exception("could not keep the output of %s", sandbox.spec.name)


def _stop(sandbox) -> None:
    try:
        sandbox.stop(settings.JOB_STOP_GRACE_S)
    except Exception:  # noqa: BLE001 - remove() in the caller kills what is left
        log.exception("stopping sandbox %s failed", sandbox.spec.name)


# --- before the start ---------------------------------------------------------------------------


def _scratch(task: JobTask, held: Claim) -> Scratch:
    workdir = Path(settings.RUNNER_WORK_DIR) / f"task-{task.pk}-a{held.attempt}"
    return Scratch(workdir, settings.JOB_DISK_QUOTA_BYTES, mount=settings.JOB_DISK_QUOTA_MOUNT)


def _spec(held: Claim, task: JobTask, backend: Backend, gpus: list[int], scratch: Scratch,
          secrets: dict[str, str]) -> SandboxSpec:
    """The sandbox of the task; `secrets` as the sandbox may see them (provider keys replaced)."""
    job = task.job
    scratch.create()
    workdir = scratch.path
    (workdir / "code").mkdir(parents=True, exist_ok=True)
    data_dir = Path(task.competition.public_data_dir or "/nonexistent")
    if not task.competition.public_data_dir or not data_dir.is_dir():  # e.g. not copied to this host
        raise RuntimeError(f"the public data of {task.competition.slug} is not on this runner "
                           f"({task.competition.public_data_dir or 'none registered'})")
    spec = SandboxSpec(
        name=sandbox_name(task.pk, held.attempt, backend), command=list(job.agent.command), data_dir=data_dir,
        workdir=workdir, tools_dir=TOOLS_DIR, image=_image(job), env=_env(job, task, secrets), gpus=tuple(gpus),
        cpus=job.cpus, memory_bytes=int(job.memory_gb * (1 << 30)), time_limit_s=job.time_limit_s,
        network=job.network,
    )
    if research_site.is_research(task.competition):  # the workspace, the problem, no submission folder to fill
        spec = research_site.prepare(spec, task.competition, backend)
        if not job_package.is_packaged(job):
            spec = research_site.in_environment(spec, backend)
        data_dir = spec.data_dir
    paths = backend.paths(spec)
    description = _description(task, data_dir, workdir, paths)
    variables = {**paths.env(), "DESCRIPTION_FILE": description}
    command = [_expand(part, variables) for part in job.agent.command]
    spec = dataclasses.replace(spec, command=command, env={**spec.env, "DESCRIPTION_FILE": description})
    return job_package.adapt(spec, job=job, task=task, backend=backend, paths=paths, secrets=secrets)


def sandbox_name(task_id: int, attempt: int, backend: Backend) -> str:
    """The container's name: with the runner's name and its site in it, since several sites (staging
    beside production, or two test sessions) can share one Docker host and number their tasks alike."""
    runner = re.sub(r"[^A-Za-z0-9_.-]+", "-", getattr(backend, "runner_name", "") or "")[:40].strip("-.")
    owner = "-".join(part for part in (runner, getattr(backend, "site", "")[:8]) if part)
    return f"medalboard-{owner}-task-{task_id}-a{attempt}" if owner else f"medalboard-task-{task_id}-a{attempt}"


def _image(job: Job) -> str:
    from runner.jobs.services import agent_image

    return job.agent_image or agent_image(job.agent)


def _env(job: Job, task: JobTask, secrets: dict[str, str]) -> dict[str, str]:
    return {
        **secrets,  # secrets: only ever into the sandbox's environment
        "SEED": str(task.seed), "COMPETITION_ID": task.competition.slug, "MODEL": job.model_name,
        "AGENT_SETTINGS": json.dumps(job.settings, sort_keys=True),
    }


def _description(task: JobTask, data_dir: Path, workdir: Path, paths) -> str:
    if (data_dir / "description.md").is_file():
        return f"{paths.data}/description.md"
    (workdir / "code" / "description.md").write_text(task.competition.description or "")
    return f"{paths.code}/description.md"


def _expand(part: str, variables: dict[str, str]) -> str:
    """`{TOOLS_DIR}`-style placeholders in an agent's argv, replaced by the sandbox's own paths."""
    for name, value in variables.items():
        part = part.replace("{" + name + "}", value)
    return part


# --- while it runs ------------------------------------------------------------------------------


class Supervisor:
    def __init__(self, held: Claim, task: JobTask, run: Run, spec: SandboxSpec, sandbox, scratch: Scratch,
                 access: llm_access.LlmAccess | None = None) -> None:
        self.held, self.task, self.run, self.spec, self.sandbox, self.scratch = held, task, run, spec, sandbox, scratch
        self.redactor = ending.redactor_for(task.job, access)
        self.stream = TrajectoryStream(run, spec.host_logs_dir, TRAJECTORY_FILE, self.redactor,
                                       gateway=(spec.runner_dir, STEPS_FILE),
                                       most=Limits.from_settings().total_bytes)
        # Snapshots take at most half the run's output limits, so the files stored at its end (the
        # final submission, the trajectory, the logs) always have the other half.
        self.snapshots = SnapshotWatch(spec.host_submission_dir, SUBMISSION_FILE, self.redactor,
                                       Budget.share_of(Limits.from_settings(), SNAPSHOT_SHARE))
        self.started = time.monotonic()
        self.last_tail = 0.0
        self.research = research_site.Snapshots(spec) if spec.workspace_dir is not None else None
        self.gateway = access.gateway if access is not None else None

    def fence(self) -> None:
        task_leases.fence(self.held)

    def watch(self) -> Outcome:
        try:
            while True:
                code = self.sandbox.poll()
                self.tick(final=code is not None)  # after the exit: the last lines, the last submission
                if code is not None:
                    return sandbox_ended(self.sandbox, self.scratch, code)
                if self._cancelled():
                    return self._stop(JobTask.Status.CANCELLED, "cancelled")
                if spent := self._budget_spent():
                    return self._stop(JobTask.Status.SUCCEEDED, spent)
                if self.elapsed() >= self.spec.time_limit_s:
                    return self._stop(JobTask.Status.TIMED_OUT, f"stopped at the {self.spec.time_limit_s:g} s limit")
                if self.scratch.over_quota_due():
                    return self._stop(JobTask.Status.FAILED, self.scratch.quota_note)
                time.sleep(settings.JOB_POLL_S)
        finally:
            self.stream.close()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def _budget_spent(self) -> str:
        return llm_access.budget_spent(self.gateway, settings.JOB_BUDGET_GRACE_S)

    def notes(self) -> list[str]:
        return [*self.stream.tail.notes, *self.snapshots.notes, *(self.research.notes if self.research else [])]

    def tick(self, final: bool = False) -> None:
        slots.touch(self.spec.runner_dir, self.held.pk)
        self.fence()
        self.stream.pump(self.fence)
        self._snapshot()
        if self.research is not None:
            self.research.tick(self.elapsed())
        if final or time.monotonic() - self.last_tail >= LOG_TAIL_EVERY_S:
            self.last_tail = time.monotonic()
            task_leases.fence(self.held, log_tail=self._tail())

    def _tail(self) -> str:
        """The output's end with the job's secret values hidden (only those: a seed or a competition id
        in the output is not a secret)."""
        return self.redactor.text(self.sandbox.output_tail(LOG_TAIL_BYTES), cut_start=True)

    def _snapshot(self) -> None:
        from django.core.files.base import ContentFile

        from leaderboard.runs.job_runs import SnapshotError, add_snapshot

        content = self.snapshots.changed()
        if content is None:
            return
        seconds = round(self.elapsed(), 1)
        try:
            with transaction.atomic():
                self.fence()
                add_snapshot(self.run, seconds, ContentFile(content, name=SUBMISSION_FILE))
        except SnapshotError as exc:
            self.snapshots.give_back(content)
            log.warning("run %s: snapshot at %s s not kept: %s", self.run.pk, seconds, exc)

    def _cancelled(self) -> bool:
        return Job.objects.filter(pk=self.task.job_id, cancel_requested=True).exists()

    def _stop(self, status: str, why: str) -> Outcome:
        code = self.sandbox.stop(settings.JOB_STOP_GRACE_S)
        self.tick(final=True)
        return Outcome(status, why, code)

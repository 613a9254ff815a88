"""A remote runner's claim: the next queued task its hardware serves, taken with the same lease as a
job task's (runner.jobs.task_leases), its run created (runner.jobs.attempts.prepare_run), and the
answer that carries everything the runner needs to run it: the sandbox, the secrets (only here, for
this task), what to redact, the data manifest and the site's limits.

A runner holds at most as many live leases as the slots it registered with (`Runner.concurrency`):
the count, the claim and its GPUs are taken under a lock on the runner's row, so two of its slots
claiming at once never go past it nor take the same GPU."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from runner.api_v1 import agents, data, llm, research
from runner.host.outputs import Limits
from runner.jobs import attempts, task_leases
from runner.jobs.services import agent_image
from runner.models import GpuSlot, JobTask, RemoteAttempt, Runner

CLAIM_POLL_S = 0.5
MAX_WAIT_S = 25.0
MAX_SLOTS = 64


def heartbeat(runner: Runner) -> None:
    Runner.objects.filter(pk=runner.pk).update(last_heartbeat=timezone.now())


def claim_next(runner: Runner, wait_s: float) -> tuple[task_leases.Claim, JobTask] | None:
    """Long-poll: the first task this runner can serve, claimed, within `wait_s` (at most MAX_WAIT_S)."""
    deadline = time.monotonic() + min(max(wait_s, 0.0), MAX_WAIT_S)
    while True:
        heartbeat(runner)
        runner.refresh_from_db()
        if runner.token_revoked_at is not None:  # revoked while this long-poll waited: it takes nothing
            return None
        if runner.status != Runner.Status.DRAINING and held_count(runner) < runner.concurrency:
            for task in _candidates(runner):
                held = _claim_in_a_slot(task, runner)
                if held is not None:
                    return held, task
        if time.monotonic() >= deadline:
            return None
        time.sleep(CLAIM_POLL_S)


def held_count(runner: Runner) -> int:
    """The runner's tasks whose lease is live: an expired one is the sweep's to hand on, not a slot."""
    return JobTask.objects.filter(
        runner=runner, status__in=task_leases.HELD, lease_expires_at__gt=timezone.now()
    ).count()


def checked_slots(value) -> int:
    """The slots a runner registers with, as untrusted input: a whole number within 1..MAX_SLOTS."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SLOTS:
        raise ValueError(f"slots: a whole number from 1 to {MAX_SLOTS}")
    return value


def _claim_in_a_slot(task: JobTask, runner: Runner) -> task_leases.Claim | None:
    """Claim `task` if one of the runner's slots is free, with its GPUs; None if it was taken
    meanwhile, the slots are full or its GPUs are not free now (it stays queued)."""
    with transaction.atomic():
        _lock(runner)
        if held_count(runner) >= runner.concurrency:
            return None
        held = task_leases.claim(task.pk, runner)
        if held is None or not task.job.gpus:
            return held
        try:
            task_leases.take_gpus(held, runner, task.job.gpus, task.job.gpu_type)
        except task_leases.NoFreeGpus:
            task_leases.release(held)
            return None
        except RuntimeError:  # it can never run here: answer() fails it, saying why
            pass
        return held


def _lock(runner: Runner) -> None:
    """The runner's row, locked to the end of the transaction: its slots' claims, one at a time."""
    Runner.objects.select_for_update().only("pk").get(pk=runner.pk)


def _candidates(runner: Runner):
    free_gpus = GpuSlot.objects.filter(runner=runner, task__isnull=True).count()
    queued = (
        JobTask.objects.filter(status=JobTask.Status.QUEUED, job__cancel_requested=False, job__gpus__lte=free_gpus)
        .select_related("job__agent", "competition")
        .order_by("pk")
    )
    for task in queued[:50]:
        if not runner.meets(task.job.requirements or {}):
            continue
        image = task.job.agent_image or agent_image(task.job.agent)
        if task.job.agent.image and not agents.servable(runner, task.job, image):
            continue
        yield task


def answer(held: task_leases.Claim, task: JobTask, runner: Runner) -> dict:
    """Create (or restart) the task's run and describe the task to the runner that claimed it."""
    task = JobTask.objects.select_related("job__agent", "job__experiment", "job__created_by", "competition").get(
        pk=task.pk
    )
    run = attempts.prepare_run(held, task)
    RemoteAttempt.objects.get_or_create(task=task, attempt=held.attempt)
    _forget_earlier_attempts(task.pk)
    job, secrets = task.job, task.job.secrets()
    folder = Path(task.competition.public_data_dir or "/nonexistent")
    if not task.competition.public_data_dir or not folder.is_dir():
        raise FileNotFoundError(f"the public data of {task.competition.slug} is not on the site")
    limits = Limits.from_settings()
    gpus = sorted(GpuSlot.objects.filter(runner=runner, task_id=task.pk).values_list("index", flat=True))
    if job.gpus and not gpus:  # none taken with the claim: it can never run here, and this says why
        gpus = task_leases.take_gpus(held, runner, job.gpus, job.gpu_type)
    with transaction.atomic():
        task_leases.fence(held)
    return {
        "task": task.pk,
        "run": run.pk,
        "lease": {"owner": held.owner, "attempt": held.attempt},
        "competition": task.competition.slug,
        "seed": task.seed,
        "sandbox": {
            "command": list(job.agent.command),
            "image": job.agent_image or agent_image(job.agent),
            "env": {
                **secrets,
                "SEED": str(task.seed),
                "COMPETITION_ID": task.competition.slug,
                "MODEL": job.model_name,
                "AGENT_SETTINGS": json.dumps(job.settings, sort_keys=True),
            },
            "gpus": gpus,
            "cpus": job.cpus,
            "memory_bytes": int(job.memory_gb * (1 << 30)),
            "time_limit_s": job.time_limit_s,
            "network": job.network,
        },
        "agent": agents.describe(job),  # an MLE-bench-packaged agent's files, built on the runner
        "redact": list(secrets.values()),
        "llm": llm.claim_part(job),  # the runner's gateway keeps the provider keys of `env`
        "description": task.competition.description or "",
        "data": data.manifest(folder),
        **research.claim_part(task),  # a research task's problem, read-only files, environment
        "limits": {
            "file_bytes": limits.file_bytes,
            "total_bytes": limits.total_bytes,
            "files": limits.files,
            "name_chars": _name_chars(),
            "disk_quota_bytes": settings.JOB_DISK_QUOTA_BYTES,
        },
        "timing": {
            "lease_s": settings.JOB_LEASE_S,
            "poll_s": settings.JOB_POLL_S,
            "stop_grace_s": settings.JOB_STOP_GRACE_S,
        },
    }


def _forget_earlier_attempts(task_id: int) -> None:
    """An earlier attempt's staged files (one that lost its lease, or whose runner was revoked) are
    never stored: the new attempt starts the run afresh."""
    for folder in Path(settings.RUNNER_UPLOAD_DIR).glob(f"task-{task_id}-a*"):
        shutil.rmtree(folder, ignore_errors=True)


def _name_chars() -> int:
    from leaderboard.runs.job_runs import MAX_NAME_CHARS

    return MAX_NAME_CHARS

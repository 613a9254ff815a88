"""Claims on job tasks: who runs a task, until when, and the fence every write goes through.

A runner claims a queued JobTask with one conditional UPDATE (status queued -> running, a fresh
token as lease owner, an expiry, attempts + 1) and keeps renewing the expiry while it works. Every
later write first renews through `fence`, inside the same transaction as the write: if the sweep
gave the task to someone else (the lease expired: the runner hung or was partitioned), the fence
matches no row and the write raises LeaseLost instead of happening. GPUs are taken per device
index the same way (GpuSlot rows, conditional UPDATE), so two tasks never share a GPU.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from runner.models import GpuSlot, JobTask, Runner
from runner.routing import gpu_type_matches

HELD = (JobTask.Status.RUNNING, JobTask.Status.GRADING)


class LeaseLost(Exception):
    """This attempt no longer holds its task: stop, and write nothing more."""


class NoFreeGpus(Exception):
    """The runner has the GPUs but other tasks hold them now: try again later."""


@dataclass(frozen=True)
class Claim:
    task_id: int
    token: str
    attempt: int


def lease_expiry():
    return timezone.now() + timedelta(seconds=settings.JOB_LEASE_S)


def claim(task_id: int, runner: Runner | None) -> Claim | None:
    """Take a queued task; None if it is not queued (another worker has it, it ended or was cancelled).
    A task of a cancelled job is never started again, whatever put it back in the queue: it ends."""
    token = uuid.uuid4().hex
    taken = JobTask.objects.filter(pk=task_id, status=JobTask.Status.QUEUED, job__cancel_requested=False).update(
        status=JobTask.Status.RUNNING, lease_owner=token, lease_expires_at=lease_expiry(),
        attempts=F("attempts") + 1, runner=runner, claimed_at=timezone.now(), error="",
    )
    if taken != 1:
        cancel_queued(JobTask.objects.filter(pk=task_id, job__cancel_requested=True))
        return None
    return Claim(task_id, token, JobTask.objects.values_list("attempts", flat=True).get(pk=task_id))


def cancel_queued(tasks: QuerySet[JobTask]) -> int:
    """End the queued ones among `tasks` as cancelled (their job was cancelled); how many ended."""
    return tasks.filter(status=JobTask.Status.QUEUED).update(
        status=JobTask.Status.CANCELLED, error="cancelled before it started", finished_at=timezone.now(),
        lease_owner="", lease_expires_at=None,
    )


def fence(held: Claim, **changes) -> None:
    """Renew the lease (and apply `changes`) if this attempt still holds the task; else LeaseLost."""
    renewed = JobTask.objects.filter(pk=held.task_id, lease_owner=held.token, status__in=HELD).update(
        **{"lease_expires_at": lease_expiry(), **changes}
    )
    if renewed != 1:
        raise LeaseLost(f"job task {held.task_id}: attempt {held.attempt} lost its lease")


def release(held: Claim, **changes) -> bool:
    """Hand the task back to the queue (the agent never started); the attempt does not count."""
    return JobTask.objects.filter(pk=held.task_id, lease_owner=held.token, status__in=HELD).update(
        status=JobTask.Status.QUEUED, lease_owner="", lease_expires_at=None, attempts=F("attempts") - 1,
        **changes,
    ) == 1


def finish(held: Claim, status: str, **changes) -> None:
    """End the task with `status`, if this attempt still holds it."""
    with transaction.atomic():
        fence(held, status=status, lease_expires_at=None, finished_at=timezone.now(), **changes)
        free_gpus(held.task_id)


# --- GPUs ---------------------------------------------------------------------------------------


def sync_gpu_slots(runner: Runner) -> None:
    """One slot per detected GPU; slots of GPUs that disappeared go (with nothing held on them)."""
    indices = {int(g["index"]): str(g.get("name", "")) for g in runner.gpus}
    for index, name in indices.items():
        GpuSlot.objects.update_or_create(runner=runner, index=index, defaults={"name": name})
    GpuSlot.objects.filter(runner=runner).exclude(index__in=list(indices)).delete()


def take_gpus(held: Claim, runner: Runner, count: int, gpu_type: str = "") -> list[int]:
    """Exactly `count` free GPUs of the runner (of `gpu_type` if given), each by a conditional UPDATE."""
    if count <= 0:
        return []
    if runner is None:
        raise RuntimeError(f"{count} GPUs needed, but this worker is not a registered runner (manage.py runner)")
    have = [slot for slot in GpuSlot.objects.filter(runner=runner) if gpu_type_matches(gpu_type, slot.name)]
    if len(have) < count:  # routed to a runner that can never serve it: permanent
        raise RuntimeError(f"{count} {gpu_type or 'GPU'}s needed, {runner.name} has {len(have)}")
    taken: list[int] = []
    for slot in GpuSlot.objects.filter(runner=runner, task__isnull=True).order_by("index"):
        if len(taken) == count:
            break
        if gpu_type_matches(gpu_type, slot.name) and GpuSlot.objects.filter(pk=slot.pk, task__isnull=True).update(
            task_id=held.task_id
        ) == 1:
            taken.append(slot.index)
    if len(taken) < count:
        free_gpus(held.task_id)
        raise NoFreeGpus(f"{count} GPUs needed, {len(taken)} free on {runner.name}")
    fence(held, gpu_indices=taken)
    return taken


def free_gpus(task_id: int) -> None:
    GpuSlot.objects.filter(task_id=task_id).update(task=None)

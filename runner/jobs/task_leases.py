"""Claims on job tasks: the job side of the one lease machine (webapp.leases), and GPUs.

A runner claims a queued JobTask with one conditional UPDATE (status queued -> running, a fresh
token as lease owner, an expiry, attempts + 1) and the supervisor renews the expiry on every poll.
Every later write first renews through `fence`, inside the same transaction as the write: if the
sweep gave the task to someone else (the lease expired: the runner hung or was partitioned), the
fence matches no row and the write raises LeaseLost instead of happening. GPUs are taken per device
index the same way (GpuSlot rows, conditional UPDATE), so two tasks never share a GPU.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from runner.jobs.queues import gpu_type_matches
from runner.models import GpuSlot, JobTask, Runner
from webapp import leases
from webapp.leases import Lease, LeaseLost, fence, renew  # noqa: F401 - the runner's names for them

HELD = (JobTask.Status.RUNNING, JobTask.Status.GRADING)
JOB_TASKS = leases.Leased(
    JobTask, "job task", waiting=JobTask.Status.QUEUED, working=JobTask.Status.RUNNING,
    failed=JobTask.Status.FAILED, held=HELD, lease_s=lambda: settings.JOB_LEASE_S,
)
Claim = Lease  # a job task's lease: `pk` is the task's id, `owner` the attempt's token


class NoFreeGpus(Exception):
    """The runner has the GPUs but other tasks hold them now: try again later."""


def claim(task_id: int, runner: Runner | None) -> Claim | None:
    """Take a queued task; None if it is not queued (another worker has it, it ended or was cancelled).
    A task of a cancelled job is never started again, whatever put it back in the queue: it ends."""
    held = leases.claim(JOB_TASKS, task_id, where={"job__cancel_requested": False},
                        runner=runner, claimed_at=timezone.now(), error="")
    if held is None:
        cancel_queued(JobTask.objects.filter(pk=task_id, job__cancel_requested=True))
    return held


def cancel_queued(tasks: QuerySet[JobTask]) -> int:
    """End the queued ones among `tasks` as cancelled (their job was cancelled); how many ended."""
    return tasks.filter(status=JobTask.Status.QUEUED).update(
        status=JobTask.Status.CANCELLED, error="cancelled before it started", finished_at=timezone.now(),
        lease_owner="", lease_expires_at=None,
    )


def release(held: Claim, **changes) -> bool:
    """Hand the task back to the queue (the agent never started); the attempt does not count."""
    return leases.release(held, uncount=True, **changes)


def finish(held: Claim, status: str, **changes) -> None:
    """End the task with `status`, if this attempt still holds it."""
    with transaction.atomic():
        fence(held, status=status, lease_expires_at=None, finished_at=timezone.now(), **changes)
        free_gpus(held.pk)


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
            task_id=held.pk
        ) == 1:
            taken.append(slot.index)
    if len(taken) < count:
        free_gpus(held.pk)
        raise NoFreeGpus(f"{count} GPUs needed, {len(taken)} free on {runner.name}")
    fence(held, gpu_indices=taken)
    return taken


def free_gpus(task_id: int) -> None:
    GpuSlot.objects.filter(task_id=task_id).update(task=None)

"""Runner tokens: made once and shown once, kept as a sha256, revoked by staff."""

from __future__ import annotations

import hashlib
import secrets

from django.db import transaction
from django.utils import timezone

from runner.jobs import task_leases
from runner.models import JobTask, Runner

PREFIX = "mbr_"


def hashed(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue(name: str) -> tuple[Runner, str]:
    """A new token for the runner `name` (created if new; an old token stops working); the token is
    returned here and nowhere else."""
    token = PREFIX + secrets.token_urlsafe(32)
    runner, _ = Runner.objects.update_or_create(
        name=name, defaults={"token_hash": hashed(token), "token_revoked_at": None}
    )
    return runner, token


def runner_for(token: str) -> Runner | None:
    """The runner holding `token`, revoked or not (the caller tells them apart); None if unknown."""
    if not token.startswith(PREFIX):
        return None
    return Runner.objects.filter(token_hash=hashed(token)).first()


def revoke(runner: Runner) -> int:
    """Revoke the runner's token and hand the tasks it holds back to the queue (their attempt does
    not count: the runner was stopped, the agent did nothing wrong); how many went back."""
    with transaction.atomic():
        Runner.objects.filter(pk=runner.pk).update(token_revoked_at=timezone.now(), status=Runner.Status.OFFLINE)
        held = list(
            JobTask.objects.filter(runner=runner, status__in=task_leases.HELD).values_list(
                "pk", "lease_owner", "attempts"
            )
        )
        back = 0
        for pk, owner, attempt in held:
            back += task_leases.release(
                task_leases.Claim(task_leases.JOB_TASKS, pk, owner, attempt),
                error=f"runner {runner.name} was revoked; back in the queue",
            )
            task_leases.free_gpus(pk)
    return back

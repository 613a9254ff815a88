"""Leases: which worker holds a row's work, until when, and the fence each of its writes goes through.

One machine for every kind of work a worker claims (job tasks, gradings, upload imports, research
baselines). A kind (`Leased`) names the model and the fields its lease lives in; this module knows
nothing else of it.

- `claim`: one conditional UPDATE (waiting -> working, an owner, an expiry, attempts + 1), so two
  workers never hold the same row; the loser's UPDATE matches nothing.
- `fence`: before a write, inside the write's transaction, renew the lease if this owner still holds
  it, else raise LeaseLost and write nothing (the sweep gave the work to someone else).
- `renew` / `Heartbeat`: keep a short lease alive while the work runs (a job's supervisor renews on
  every poll; gradings, imports and baselines renew from a thread). Leases are short (LEASE_S, a
  minute), so a worker killed with SIGKILL is noticed within about a minute, whatever the work's
  time limit.
- `release`: hand the row back (a transient error); `end`: the last write of the holder.
- `sweep_expired`: expired leases go back to waiting, or fail with the reason after bounded attempts.

Every change is conditional on the state read, so any number of workers may sweep at once.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import DatabaseError, connections, models, transaction
from django.db.models import F
from django.utils import timezone

log = logging.getLogger(__name__)


class LeaseLost(Exception):
    """This owner no longer holds the row: stop, and write nothing more."""


@dataclass(frozen=True)
class Leased:
    """A kind of leased work: its model, its statuses and the names of its lease fields."""

    model: type[models.Model]
    name: str  # for messages: "job task", "grading of run"
    waiting: str  # the status a claim takes the row from, and a retry puts it back to
    working: str  # the status a claim gives it
    failed: str  # the status of a row whose attempts ran out
    lease_s: Callable[[], float]  # read at each use, so a changed setting applies at once
    held: tuple[str, ...] = ()  # statuses in which the lease is held; (working,) if empty
    status: str = "status"
    owner: str = "lease_owner"
    expires: str = "lease_expires_at"
    attempts: str = "attempts"

    @property
    def holding(self) -> tuple[str, ...]:
        return self.held or (self.working,)

    def expiry(self) -> datetime:
        return timezone.now() + timedelta(seconds=self.lease_s())

    def held_by(self, pk, owner: str) -> models.QuerySet:
        return self.model.objects.filter(pk=pk, **{self.owner: owner, f"{self.status}__in": self.holding})


@dataclass(frozen=True)
class Lease:
    """One owner's hold on one row (`attempt`: the row's attempts when it was claimed)."""

    kind: Leased
    pk: int
    owner: str
    attempt: int = 0


def claim(kind: Leased, pk, owner: str | None = None, *, where: dict | None = None, **changes) -> Lease | None:
    """Take a waiting row (matching `where` too) for `owner` (a fresh token if None), applying
    `changes`; None if another worker has it or it is not waiting."""
    owner = owner or uuid.uuid4().hex
    taken = kind.model.objects.filter(pk=pk, **{kind.status: kind.waiting}, **(where or {})).update(
        **{kind.status: kind.working, kind.owner: owner, kind.expires: kind.expiry(),
           kind.attempts: F(kind.attempts) + 1, **changes})
    if taken != 1:
        return None
    return Lease(kind, pk, owner, kind.model.objects.values_list(kind.attempts, flat=True).get(pk=pk))


def fence(lease: Lease, **changes) -> None:
    """Renew the lease and apply `changes` if this owner still holds it; else LeaseLost. Called in
    the transaction of the write it guards, so the write and the check commit together."""
    if not renew(lease, **changes):
        raise LeaseLost(f"{lease.kind.name} {lease.pk}: attempt {lease.attempt} of {lease.owner} lost its lease")


def renew(lease: Lease, **changes) -> bool:
    """Push the expiry a lease length on (and apply `changes`); False if the lease was lost."""
    kind = lease.kind
    return kind.held_by(lease.pk, lease.owner).update(**{kind.expires: kind.expiry(), **changes}) == 1


def end(lease: Lease, status: str, **changes) -> bool:
    """The holder's last write: `status` and `changes`, the lease cleared; False if it was lost."""
    kind = lease.kind
    return kind.held_by(lease.pk, lease.owner).update(**{kind.status: status, kind.expires: None, **changes}) == 1


def release(lease: Lease, *, uncount: bool = False, **changes) -> bool:
    """Hand the row back to waiting (with `changes`); `uncount`: the attempt did not start, so it
    does not count against the row's attempts."""
    kind = lease.kind
    counted = {kind.attempts: F(kind.attempts) - 1} if uncount else {}
    return kind.held_by(lease.pk, lease.owner).update(
        **{kind.status: kind.waiting, kind.owner: "", kind.expires: None, **counted, **changes}) == 1


class Heartbeat:
    """Renews a lease from a thread every third of its length while the `with` block runs, so a
    short lease outlives long work and dies with the worker. The fence before each write still
    decides; `lost` only says that a renewal found the lease gone (and the thread stopped)."""

    def __init__(self, lease: Lease) -> None:
        self.lease = lease
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{lease.kind.name}-{lease.pk}", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        # Not waiting long: a renewal stuck behind a lock (SQLite's one writer) ends by itself, and a
        # late one after the work ended matches no row.
        self._thread.join(timeout=1.0)

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self.lease.kind.lease_s() / 3):
                try:
                    if not renew(self.lease):
                        self.lost = True
                        return
                except DatabaseError as exc:  # locked or away: the next beat tries again
                    log.warning("%s %s: lease not renewed (%s)", self.lease.kind.name, self.lease.pk, exc)
        finally:
            connections.close_all()  # this thread's own connections


# --- the sweep ----------------------------------------------------------------------------------


def expired(kind: Leased, rows: models.QuerySet | None = None, now: datetime | None = None) -> models.QuerySet:
    """The rows (of `rows`, else all) whose lease ran out while held."""
    rows = kind.model.objects.all() if rows is None else rows
    return rows.filter(**{f"{kind.status}__in": kind.holding, f"{kind.expires}__lt": now or timezone.now()})


def take_over(kind: Leased, row: models.Model, now: datetime, status: str, **changes) -> bool:
    """Move an expired row read by a sweeper to `status`, unless it changed since it was read (its
    holder renewed, or another sweeper took it first): a conditional UPDATE on the state read."""
    same = kind.model.objects.filter(pk=row.pk, **{
        kind.status: getattr(row, kind.status), kind.owner: getattr(row, kind.owner), f"{kind.expires}__lt": now})
    return same.update(**{kind.status: status, kind.expires: None, **changes}) == 1


def sweep_expired(kind: Leased, *, max_attempts: int | Callable[[models.Model], int],
                  retry: Callable[[models.Model], dict], give_up: Callable[[models.Model], dict],
                  then: Callable[[models.Model, bool], None] | None = None,
                  rows: models.QuerySet | None = None) -> dict[str, int]:
    """Each expired row goes back to waiting with `retry(row)`'s changes (its owner cleared), or,
    once it has had `max_attempts` attempts, to failed with `give_up(row)`'s (the reason). `then(row,
    gave_up)` runs in the same transaction for the rows this sweeper moved."""
    counts = {"retried": 0, "failed": 0}
    now = timezone.now()
    for row in expired(kind, rows, now):
        limit = max_attempts(row) if callable(max_attempts) else max_attempts
        gave_up = getattr(row, kind.attempts) >= limit
        with transaction.atomic():
            moved = (take_over(kind, row, now, kind.failed, **give_up(row)) if gave_up
                     else take_over(kind, row, now, kind.waiting, **{kind.owner: "", **retry(row)}))
            if moved and then is not None:
                then(row, gave_up)
        counts["failed" if gave_up else "retried"] += moved
    return counts

"""Cached leaderboard responses, keyed by a version of everything they show.

One row, LeaderboardVersion(pk=1), counts the changes to what the leaderboard shows: `bump` raises
it with UPDATE ... SET n = n + 1 inside the transaction of every aggregate refresh
(leaderboard.analysis.aggregates.maintenance) and after every save or delete of the catalogue and the names a
row shows (experiments, agents, models, teams, users, competitions, splits and their membership,
benchmarks; the signals below). `for_viewer` reads the version first, then the data: under READ
COMMITTED a request that read version v sees at least the data of v, so what it caches under v is
v's or newer (harmless), and nothing older can be cached under a newer version. Entries of old
versions are never read again and expire after TTL seconds. The key holds the viewer's audience
(public or staff, each verified-only or not); a viewer who owns private graded runs is never served
from or written to the cache. Nothing per request (the signed-in user, messages, the research
section, CSRF tokens) is in a cached value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models.signals import m2m_changed, post_delete, post_save

from leaderboard.analysis.aggregates import reading
from leaderboard.analysis.aggregates.models import LeaderboardVersion

TTL = 600  # seconds an entry lives; entries of older versions are simply never read again
ROW = LeaderboardVersion.ROW
stats = {"hits": 0, "misses": 0}  # this process's, for tests and curiosity


def current() -> int | None:
    """The version now (None if its row is missing: nothing is cached then)."""
    return LeaderboardVersion.objects.filter(pk=ROW).values_list("n", flat=True).first()


def bump(using: str | None = None) -> None:
    """Raise the version in the current transaction (an UPDATE: it commits or rolls back with it)."""
    LeaderboardVersion.bump(using)


def for_viewer(user, *, verified_only: bool, key: tuple, compute: Callable[[tuple], Any]) -> Any:
    """compute(scope) with scope = (audience, own experiments) as reading.viewer_scope gives it;
    cached under (version, audience, key) when the viewer has no private rows of their own."""
    version = current()  # before any data: see the module docstring
    audience, own = reading.viewer_scope(user, verified_only=verified_only)
    if own or version is None:
        return compute((audience, own))
    digest = hashlib.sha256(repr((audience.value, key)).encode()).hexdigest()
    name = f"leaderboard:{version}:{digest}"
    value = cache.get(name)
    if value is None:
        stats["misses"] += 1
        value = compute((audience, set()))
        cache.set(name, value, TTL)
    else:
        stats["hits"] += 1
    return value


# --- what else the leaderboard shows: its saves and deletes raise the version --------------------


def _changed(sender, instance=None, update_fields=None, using=None, created=False, **kwargs) -> None:
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return  # signing in saves the user's last_login, which no page shows
    if created and sender in _SHOWN_THROUGH_RUNS:
        # A new experiment, agent, model, team or user is on no board until a graded run puts it
        # there, and that run's aggregate refresh raises the version. Raising it here would hold the
        # version row's lock from the start of an upload's transaction (its import) to its commit,
        # stalling every other writer that long.
        return
    bump(using)


_SHOWN_THROUGH_RUNS: set[type] = set()


def _membership_changed(sender, action, using=None, **kwargs) -> None:
    if action in ("post_add", "post_remove", "post_clear"):
        bump(using)


def connect() -> None:
    from leaderboard.models import Agent, Benchmark, Competition, Experiment, Finding, LanguageModel, Split, Team

    _SHOWN_THROUGH_RUNS.update((Experiment, Agent, LanguageModel, Team, get_user_model()))
    for model in (Experiment, Agent, LanguageModel, Team, Competition, Split, Benchmark, get_user_model()):
        uid = f"page-cache-{model._meta.label_lower}"
        post_save.connect(_changed, sender=model, dispatch_uid=uid + "-save")
        post_delete.connect(_changed, sender=model, dispatch_uid=uid + "-delete")
    m2m_changed.connect(_membership_changed, sender=Competition.splits.through, dispatch_uid="page-cache-splits")
    # Leaderboard rows flag runs with findings: any change to one (a scan, a decision, the admin) raises the
    # version in the same transaction, so no cached board shows the old flag.
    post_save.connect(_finding_changed, sender=Finding, dispatch_uid="trust-finding-saved")
    post_delete.connect(_finding_changed, sender=Finding, dispatch_uid="trust-finding-deleted")


def _finding_changed(sender, using=None, **kwargs) -> None:
    bump(using)

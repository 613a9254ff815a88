"""Submission snapshots: what a run would have submitted had it been stopped at a given time.

A snapshot is a file named `<elapsed-seconds>.csv` (docs/snapshots.md). It comes in three ways: as
`snapshots/<elapsed-seconds>.csv` in an imported run folder, as extra files of the upload form and
`POST /api/runs/` (`leaderboard.runs.submission.submit_run` registers them), and live from a runner
(`add_snapshot`). Each is stored as an Artifact of its run and graded by the same grader and medal
rules as the final submission (`leaderboard.runs.outcome.copy_outcome`): an invalid snapshot is graded
invalid and earns no medal.
"""

from __future__ import annotations

import logging
import math
import re
import tempfile
from pathlib import Path

from django.core.files import File
from django.db import transaction

from leaderboard import grading  # grading.grade_submission: the engine (pandas) loads when a snapshot is graded
from leaderboard.analysis import scaling
from leaderboard.models import Artifact, Run, Snapshot
from leaderboard.runs.artifacts import SNAPSHOTS_FOLDER, Upload, artifact_path, store_upload
from leaderboard.runs.outcome import copy_outcome
from webapp import queue

log = logging.getLogger(__name__)
FOLDER = SNAPSHOTS_FOLDER
_NAME = re.compile(r"^(?P<seconds>(\d+(\.\d*)?|\.\d+))\.csv$", re.IGNORECASE)


class SnapshotError(ValueError):
    """A snapshot was refused; the message says why."""


def elapsed_from_name(name: str) -> float:
    """`3600.csv` or `snapshots/90.5.csv` -> seconds; anything else is refused with the rule."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    match = _NAME.match(base)
    seconds = float(match.group("seconds")) if match else math.nan
    if not math.isfinite(seconds):
        raise SnapshotError(
            f"snapshot file {base!r}: the name must be the elapsed seconds since the run started, a "
            "non-negative finite number, followed by .csv (e.g. 3600.csv or 5400.5.csv)")
    return seconds


def name_for(elapsed_seconds: float) -> str:
    """The canonical artifact name: `snapshots/3600.csv`, `snapshots/90.5.csv`."""
    seconds = float(elapsed_seconds)
    text = str(int(seconds)) if seconds.is_integer() else repr(seconds)
    return f"{FOLDER}/{text}.csv"


def check_times(names: list[str]) -> list[float]:
    """The elapsed seconds of each name; two names for the same moment are refused."""
    seen: dict[float, str] = {}
    for name in names:
        seconds = elapsed_from_name(name)
        if seconds in seen:
            raise SnapshotError(f"snapshot files {seen[seconds]!r} and {name!r} are both at {seconds:g} s")
        seen[seconds] = name
    return list(seen)


def register(*, run: Run, artifact: Artifact) -> Snapshot:
    """A pending snapshot row for a stored snapshot artifact; grading is enqueued after commit."""
    snapshot = Snapshot.objects.create(run=run, artifact=artifact, elapsed_seconds=elapsed_from_name(artifact.name))
    transaction.on_commit(lambda: enqueue_grading(snapshot.pk))
    return snapshot


def register_if_snapshot(run: Run, artifact: Artifact) -> Artifact:
    """A door that stores a run's files of any kind (an upload, a runner's output) calls this with each
    one stored: a snapshot file gets its pending Snapshot row (`register`), the others nothing. The
    artifacts module stores files and knows no workflow, so the registration is asked for here."""
    if artifact.kind == Artifact.Kind.SNAPSHOT:
        register(run=run, artifact=artifact)
    return artifact


@transaction.atomic
def add_snapshot(*, run: Run, elapsed_seconds: float, file: File) -> Snapshot:
    """Store a live snapshot of a running agent's submission and enqueue its grading.

    Refuses (SnapshotError) a negative or non-finite time and a second snapshot at the same time."""
    seconds = float(elapsed_seconds)
    if not math.isfinite(seconds) or seconds < 0:
        raise SnapshotError(f"elapsed_seconds must be a non-negative finite number, got {elapsed_seconds!r}")
    if run.snapshots.filter(elapsed_seconds=seconds).exists():
        raise SnapshotError(f"run {run.pk} already has a snapshot at {seconds:g} s")
    return register(run=run, artifact=store_upload(run, Upload(Artifact.Kind.SNAPSHOT, name_for(seconds), file)))


def enqueue_grading(snapshot_id: int) -> None:
    queue.publish(queue.GRADE_SNAPSHOT, [snapshot_id], what=f"grading of snapshot {snapshot_id}")  # None: stays pending


def grade_pending_now(run_id: int) -> dict[str, int]:
    """Grade every pending snapshot of a run in this process, each claimed as its task claims it (so a
    worker that gets the same snapshot finds it taken); returns how many ended in each status."""
    outcomes: dict[str, int] = {}
    pending = Snapshot.objects.filter(run_id=run_id, status=Snapshot.Status.PENDING).order_by("elapsed_seconds")
    for snapshot_id in list(pending.values_list("pk", flat=True)):
        status = queue.run_here(queue.GRADE_SNAPSHOT, [snapshot_id]).get()
        outcomes[status] = outcomes.get(status, 0) + 1
    return outcomes


def grade_stored_snapshot(snapshot: Snapshot, *, answers_path: Path | None = None) -> Snapshot:
    """Grade the snapshot's file against its run's competition, exactly as a final submission
    (`answers_path`: other answers than the competition's, as seed_demo's synthetic ones)."""
    competition = snapshot.run.competition
    if competition is None:
        snapshot.status, snapshot.grading_error = Snapshot.Status.FAILED, "the run's task is not in the catalogue"
        snapshot.save()
        return snapshot
    with tempfile.TemporaryDirectory(prefix="medalboard-snapshot-") as scratch:
        path = artifact_path(snapshot.artifact, Path(scratch)) if snapshot.artifact_id else None
        report = grading.grade_submission(competition, path, answers_path=answers_path)
    available = copy_outcome(snapshot, report, competition)
    snapshot.status = Snapshot.Status.GRADED if available else Snapshot.Status.FAILED
    with transaction.atomic():
        snapshot.save()
        refresh_timeline(snapshot.run_id)
    return snapshot


def refresh_timeline(run_id: int) -> None:
    """Rewrite a run's snapshot_timeline from its graded snapshots; call after any snapshot changes."""
    with transaction.atomic():
        list(Run.objects.select_for_update().filter(pk=run_id).values_list("pk"))  # one writer per run
        rows = (Snapshot.objects.filter(run_id=run_id, status=Snapshot.Status.GRADED)
                .order_by("elapsed_seconds").values_list("elapsed_seconds", "any_medal"))
        Run.objects.filter(pk=run_id).update(snapshot_timeline=scaling.timeline_text(rows))

"""The one door through which a runner (runner/) creates, streams into, stores, grades and fails the
run of a job task.

runner/ imports nothing else of leaderboard but its models, so what a job does to its run is the
list of functions here, and the runs write side behind them can change without a runner noticing.
The steps' JSONL lines (`header_line`, `step_line`) are named here too: agents and the LLM gateway
write their trajectories in the format the site reads (docs/trajectory-format.md).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.core.exceptions import SuspiciousFileOperation
from django.core.files import File
from django.db import DatabaseError, transaction

from leaderboard.models import Artifact, Experiment, Run
from leaderboard.runs import snapshots
from leaderboard.runs.artifacts import MAX_MEMBER_PATH, STORAGE_ERRNOS, Upload, store_upload
from leaderboard.runs.experiments import ExperimentSpec, get_or_create_experiment
from leaderboard.runs.research import ResearchEvidence, record_research_result
from leaderboard.runs.snapshots import SnapshotError
from leaderboard.trajectories.importers.base import to_count, to_float  # a run's numbers as its columns hold them
from leaderboard.trajectories.importers.jsonl import header_line, step_line
from leaderboard.trust import disclosures
from leaderboard.trust.reproductions import may_reproduce

__all__ = [
    "MAX_NAME_CHARS", "ExperimentSpec", "FileRefused", "LiveSteps", "ResearchEvidence", "SnapshotError",
    "add_snapshot", "experiment_for", "grade", "header_line", "may_reproduce", "record_recipe",
    "record_research_result", "report_progress_with", "reproduction_of", "save_final_trajectory", "step_line",
    "store_file", "to_count", "to_float",
]

log = logging.getLogger(__name__)
MAX_NAME_CHARS = MAX_MEMBER_PATH  # the longest artifact name a run's file is shown under


def experiment_for(*, owner, spec: ExperimentSpec, network: str | None = None) -> Experiment:
    """The owner's experiment a job's runs join: its hardware described from the GPUs, CPUs and memory
    its sandboxes are limited to, and internet used exactly when they join an egress `network`, all
    recorded as the runner's (leaderboard.trust.disclosures), not an uploader's statement."""
    return get_or_create_experiment(
        replace(spec, hardware="", agent_version="", disclosures=disclosures.for_job(network=network),
                disclosed_by=Experiment.DisclosedBy.RUNNER),
        owner=owner,
    )


def reproduction_of(*, original: Experiment, owner) -> Experiment:
    """A new experiment for a reproduction of `original`, owned by whoever asked for it: the
    original's configuration, its own runs (leaderboard.trust.reproductions compares the two)."""
    from leaderboard.runs.reproductions import new_reproduction

    return new_reproduction(original=original, owner=owner)


def record_recipe(run: Run, recipe: dict[str, Any]) -> None:
    """What the run needs to run again (runner.recipes), as its sandbox starts."""
    Run.objects.filter(pk=run.pk).update(recipe=recipe)


def report_progress_with(source) -> None:
    """`source(experiment_ids) -> {experiment id: tasks not finished}`: how the site tells a pending
    reproduction from a finished one without knowing what a job is (the runner registers it)."""
    from leaderboard.trust.reproductions import set_progress_source

    set_progress_source(source)


class FileRefused(Exception):
    """Storage could not take this one file (its name, its row); the message says why. Storage that
    is down or full is not this: it raises OSError, as every file of the run would fail the same."""


def store_file(run: Run, kind: str, name: str, file: File) -> Artifact:
    """One of the run's output files, measured and stored as an artifact (a snapshot is registered too),
    in a savepoint of its own: FileRefused leaves the run and its other files as they were. `name` is
    kept as the artifact's name (the file is stored under a safe one derived from it); one longer than
    MAX_NAME_CHARS is refused."""
    if len(name) > MAX_NAME_CHARS:
        raise FileRefused(f"the name is longer than {MAX_NAME_CHARS} characters")
    try:
        with transaction.atomic():
            return store_upload(run, Upload(kind, name, file))
    except OSError as exc:
        if exc.errno in STORAGE_ERRNOS:
            raise
        raise FileRefused(exc.strerror or str(exc)) from exc
    except (SuspiciousFileOperation, DatabaseError, ValueError) as exc:
        raise FileRefused(str(exc)) from exc


def add_snapshot(run: Run, elapsed_seconds: float, file: File):
    """A submission the agent wrote while running, graded later; SnapshotError if it cannot be kept."""
    return snapshots.add_snapshot(run=run, elapsed_seconds=elapsed_seconds, file=file)


class LiveSteps:
    """Steps appended to the run's trajectory while the agent writes its JSONL file, so the run page
    shows them during the run. Storage without local paths (S3) takes none: the steps arrive at the end."""

    def __init__(self, run: Run) -> None:
        from leaderboard.trajectories.importers.base import ParsedTrajectory, TrajectoryMeta
        from leaderboard.trajectories.store import LiveTrajectory

        try:
            self.live = LiveTrajectory(run)
        except NotImplementedError:
            self.live = None
        self.parsed = ParsedTrajectory(format="jsonl", meta=TrajectoryMeta(), steps=iter(()))

    @property
    def available(self) -> bool:
        return self.live is not None

    def append(self, numbered_lines: Iterable[tuple[int, bytes]], fence) -> int:
        """Parse (line number, line) pairs of the file and append their steps; `fence` runs in the
        transaction that stores them. Returns how many steps were added."""
        from leaderboard.trajectories.importers.jsonl import is_header_line, parse_step_line

        if self.live is None:
            return 0
        steps = []
        for lineno, line in numbered_lines:
            if lineno == 1 and is_header_line(line):
                continue
            step = parse_step_line(line, lineno, self.live.count + len(steps), self.parsed)
            if step is not None:
                steps.append(step)
        self.live.append(steps, fence)
        return len(steps)

    def close(self) -> None:
        if self.live is not None:
            self.live.close()


def save_final_trajectory(run: Run, files: Iterable[tuple[Path | str | None, str]]) -> None:
    """The run's trajectory from the stored (redacted, whole) files, each (path, name) in turn, as the
    importer reads them: what an upload of them would store, one trajectory of their steps. A file that
    cannot be read is named in a warning; with none readable the steps streamed live stay."""
    from leaderboard.trajectories.importers import TrajectoryError, detect, read_trajectories, save_steps

    parts = []
    for path, name in files:
        if path is None or not os.path.isfile(path) or detect(path) is None:
            continue
        try:
            parsed = next(iter(read_trajectories(path)), None)
        except TrajectoryError as exc:
            run.refresh_from_db()
            Run.objects.filter(pk=run.pk).update(import_warnings=[*run.import_warnings, f"{name}: {exc}"])
            continue
        if parsed is not None:
            parts.append(parsed)
    if parts:
        run.refresh_from_db()
        warnings = list(run.import_warnings)
        save_steps(run, _joined(parts))
        Run.objects.filter(pk=run.pk).update(import_warnings=[*warnings, *run.import_warnings])


def _joined(parts: list):
    """One trajectory of several: the first's format and totals, every step in turn, renumbered."""
    first = parts[0]
    if len(parts) == 1:
        return first

    sources = [(part, part.steps) for part in parts]  # before first.steps is replaced by the join

    def steps():
        offset = 0
        for part, part_steps in sources:
            count = 0
            for step in part_steps:
                count = max(count, (step.index or 0) + 1)
                step.index = (step.index or 0) + offset
                if step.parent_index is not None:
                    step.parent_index += offset
                step.raw = None
                yield step
            offset += count
            first.warnings.extend(w for w in part.warnings if part is not first)

    first.steps = steps()
    return first


def grade(run: Run, owner: str) -> None:
    """Grade the finished job's run here, with the claim an upload's grading takes (`owner` names the
    claimant). A transient failure leaves the run pending: the sweep hands it to the grading queue."""
    from leaderboard.tasks import TRANSIENT_ERRORS, claim_grading, grade_claimed

    Run.objects.filter(pk=run.pk).update(status=Run.Status.PENDING)
    try:
        if claim_grading(run.pk, owner):
            grade_claimed(run.pk, owner)
    except TRANSIENT_ERRORS as exc:
        log.warning("run %s: grading deferred to the sweep: %s", run.pk, exc)

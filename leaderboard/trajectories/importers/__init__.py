"""Trajectory importers: one module per format behind one interface (base.Importer) and a registry.

    fmt = detect(path)                      # from the content, not the name
    for parsed in read_trajectories(path):  # Inspect logs hold one trajectory per sample
        save_steps(run, parsed)

docs/trajectory-format.md describes the step kinds and what their `data` holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.core.files.storage import default_storage
from django.db import transaction

from leaderboard.models import Run, StepKind
from leaderboard.trajectories import provenance
from leaderboard.trajectories.importers import aide, inspect, jsonl, mlagentbench, mlebench_run, openhands, sweagent  # noqa: F401
from leaderboard.trajectories.importers.base import (
    ParsedTrajectory,
    StepData,
    TrajectoryError,
    TrajectoryMeta,
    detect,
    registry,
    sanitize,
)

__all__ = [
    "ParsedTrajectory",
    "StepData",
    "TrajectoryError",
    "TrajectoryMeta",
    "detect",
    "read_trajectories",
    "registry",
    "save_steps",
]

VALID_KINDS = frozenset(StepKind.values)


def read_trajectories(path: Path) -> Iterator[ParsedTrajectory]:
    """Every trajectory in the file; raises TrajectoryError only when nothing at all is readable."""
    path = Path(path)
    name = detect(path)
    if name is None:
        raise TrajectoryError(f"{path.name}: not a trajectory format Medalboard knows")
    for parsed in registry[name].read(path):
        parsed.steps = _checked(parsed, parsed.steps)
        yield parsed


def _checked(parsed: ParsedTrajectory, steps: Iterator[StepData]) -> Iterator[StepData]:
    """Every importer's steps pass here: untrusted text is made safe, and a crash becomes a warning."""
    expected = 0
    try:
        for step in steps:
            if dropped := provenance.strip_mark(step):
                names = ", ".join(f"data.{name}" for name in dropped)
                verb = "is" if len(dropped) == 1 else "are"
                parsed.warn(f"step {step.index}: {names} {verb} set by the site only; dropped")
            if step.raw is not None and step.index == expected:  # validated by its importer already
                expected += 1
                yield step
                continue
            step.raw = None
            if step.kind not in VALID_KINDS:
                parsed.warn(f"step {step.index}: unknown kind {step.kind!r} stored as 'message'")
                step.data = {**(step.data or {}), "original_kind": str(step.kind)}
                step.kind = StepKind.MESSAGE
            if step.parent_index is not None and not 0 <= step.parent_index < step.index:
                parsed.warn(f"step {step.index}: parent_index {step.parent_index} is not an earlier step; dropped")
                step.parent_index = None
            step.index = expected  # importers count from 0 already; this keeps the sequence gap-free
            expected += 1
            yield sanitize(step)
    except SoftTimeLimitExceeded:
        raise  # the importing task's time limit (leaderboard.runs.intake), not a bad file: never a short trajectory
    except Exception as exc:  # noqa: BLE001 - a bad file must never crash an import
        parsed.warn(f"stopped reading after step {expected - 1}: {exc.__class__.__name__}: {exc}")
    if parsed.suppressed_warnings:
        parsed.warnings.append(f"... and {parsed.suppressed_warnings} more warnings")
        parsed.suppressed_warnings = 0


def save_steps(run: Run, parsed: ParsedTrajectory, *, take_totals: bool = True) -> int:
    """Replace the run's steps with the trajectory's, streaming; returns how many were stored.

    With `take_totals` the trajectory's own figures (tokens, cost, duration, start) become the run's;
    a job's run passes False: its figures are the runner's and the gateway's, never the agent's file.

    The steps go to one file in artifact storage, indexed by block (leaderboard.trajectories.store),
    so memory stays bounded whatever the trajectory's length; a huge step is stored cut, and kept
    whole as an artifact (leaderboard.trajectories.step_size). Call inside a transaction when other rows depend
    on it; the files of a failed import are removed.
    """
    from leaderboard.trajectories import step_size  # it imports models, which import this package's base
    from leaderboard.trajectories.store import delete_file, write_steps

    trajectory, kept = None, []
    try:
        with transaction.atomic():
            trajectory = write_steps(run, step_size.bounded(run, parsed.steps, parsed.warn, kept))
            _update_run(run, parsed, trajectory.n_steps, take_totals)
    except BaseException:
        if trajectory is not None:
            delete_file(default_storage, trajectory.file)
        for name in kept:
            default_storage.delete(name)
        raise
    return trajectory.n_steps


def _update_run(run: Run, parsed: ParsedTrajectory, count: int, take_totals: bool) -> None:
    meta = parsed.meta
    run.n_steps = count
    run.trajectory_format = parsed.format
    run.import_warnings = list(parsed.warnings)
    fields = ["n_steps", "trajectory_format", "import_warnings"]
    if take_totals:
        fields += _take_totals(run, meta)
        if isinstance(meta.extra.get("agent_steps"), int):
            run.agent_steps = meta.extra["agent_steps"]
            fields.append("agent_steps")
        if isinstance(meta.extra.get("failure_classes"), list):  # read from the run's own folder (MLAgentBench)
            run.failure_classes = list(meta.extra["failure_classes"])
            fields.append("failure_classes")
    if meta.task_name and not run.task_name:
        run.task_name = meta.task_name[:300]
        fields.append("task_name")
    run.save(update_fields=[*fields, "updated_at"])


def _take_totals(run: Run, meta: TrajectoryMeta) -> list[str]:
    """The trajectory's own tokens, cost, duration and start set on the run; the fields it set."""
    known, fields = meta.totals(), []
    for name in ("tokens_in", "tokens_out", "cost_usd", "duration_s"):
        if known[name] is None and getattr(meta, name) is not None:
            run.import_warnings.append(f"the trajectory's {name} total ({getattr(meta, name)!r:.40}) is out of "
                                       "range (a count from 0 to 2^63, a finite number); not recorded")
    for name, value in known.items():
        if value is not None:
            setattr(run, name, value)
            fields.append(name)
    return fields

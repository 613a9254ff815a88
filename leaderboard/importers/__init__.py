"""Trajectory importers: one module per format behind one interface (base.Importer) and a registry.

    fmt = detect(path)                      # from the content, not the name
    for parsed in read_trajectories(path):  # Inspect logs hold one trajectory per sample
        save_steps(run, parsed)

docs/trajectory-format.md describes the step kinds and what their `data` holds.
"""

from __future__ import annotations

import functools
import io
import itertools
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import orjson
from django.db import connection, transaction

from leaderboard.importers import aide, inspect, jsonl, mlagentbench, mlebench_run, openhands, sweagent  # noqa: F401
from leaderboard.importers.base import (
    STEP_FIELDS,
    ParsedTrajectory,
    StepData,
    TrajectoryError,
    TrajectoryMeta,
    json_shape,
    read_head,
    registry,
    sanitize,
)
from leaderboard.models import Run, Step

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

# Directory formats first, then the specific JSON shapes, our own JSONL last.
DETECTION_ORDER = ["mlagentbench", "mlebench_run", "inspect", "aide", "sweagent", "openhands", "jsonl"]
VALID_KINDS = frozenset(Step.Kind.values)


def detect(path: Path) -> str | None:
    """The format name of a trajectory file or run folder, judged from its content."""
    path = Path(path)
    if not path.exists():
        return None
    head, shape = b"", None
    if path.is_file():
        head = read_head(path)
        if not head:
            return None
        shape = None if zipfile.is_zipfile(path) else json_shape(head)
    for name in DETECTION_ORDER:
        try:
            if registry[name].sniff(path, head, shape):
                return name
        except (OSError, ValueError):
            continue
    return None


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
            if step.kind not in VALID_KINDS:
                parsed.warn(f"step {step.index}: unknown kind {step.kind!r} stored as 'message'")
                step.data = {**(step.data or {}), "original_kind": str(step.kind)}
                step.kind = Step.Kind.MESSAGE
            if step.parent_index is not None and not 0 <= step.parent_index < step.index:
                parsed.warn(f"step {step.index}: parent_index {step.parent_index} is not an earlier step; dropped")
                step.parent_index = None
            step.index = expected  # importers count from 0 already; this keeps the sequence gap-free
            expected += 1
            yield sanitize(step)
    except Exception as exc:  # noqa: BLE001 - a bad file must never crash an import
        parsed.warn(f"stopped reading after step {expected - 1}: {exc.__class__.__name__}: {exc}")
    if parsed.suppressed_warnings:
        parsed.warnings.append(f"... and {parsed.suppressed_warnings} more warnings")
        parsed.suppressed_warnings = 0


def save_steps(run: Run, parsed: ParsedTrajectory, batch_size: int = 2000) -> int:
    """Replace the run's steps with the trajectory's, streaming; returns how many were stored.

    Rows are plain tuples (building 100,000 model instances for bulk_create costs ~25x the time of
    reading the file). PostgreSQL gets them through one COPY, other databases through one
    executemany per batch; either way memory stays bounded whatever the trajectory's length.
    """
    run_id = run.pk
    rows = (_row(run_id, step) for step in parsed.steps)
    with transaction.atomic():
        run.steps.all().delete()
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                count = _copy(cursor, rows)
            else:
                count = _insert_batches(cursor, rows, batch_size)
        _update_run(run, parsed, count)
    return count


STEP_COLUMNS = ("run_id", *STEP_FIELDS)


@functools.cache
def _columns() -> str:
    names = [Step._meta.get_field(name.removesuffix("_id") if name == "run_id" else name).column
             for name in STEP_COLUMNS]
    return ", ".join(connection.ops.quote_name(c) for c in names)


def _insert_sql() -> str:
    return f"INSERT INTO {connection.ops.quote_name(Step._meta.db_table)} ({_columns()}) " \
           f"VALUES ({', '.join(['%s'] * len(STEP_COLUMNS))})"


def _row(run_id: int, step: StepData) -> tuple:
    return (run_id, step.index, step.kind, step.title, step.text, _json(step.data), step.t, step.parent_index,
            step.score)


def _json(data: dict) -> str:
    try:
        return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(data, default=str)  # integers beyond 64 bits and other rarities


def _insert_batches(cursor, rows: Iterator[tuple], batch_size: int) -> int:
    sql = _insert_sql()
    count = 0
    while batch := list(itertools.islice(rows, batch_size)):
        cursor.executemany(sql, batch)
        count += len(batch)
        batch.clear()  # before the next batch is built, so only one is ever held
    return count



def _copy(cursor, rows: Iterator[tuple]) -> int:
    """PostgreSQL: stream the rows through one COPY ... FROM STDIN instead of INSERTs."""
    stream = _CopyStream(rows)
    table = connection.ops.quote_name(Step._meta.db_table)
    cursor.copy_expert(f"COPY {table} ({_columns()}) FROM STDIN", stream, size=1 << 20)
    return stream.count


def _copy_line(row: tuple) -> str:
    """A row in COPY's text format: backslash escapes, \\N for NULL; ints and finite floats as they print."""
    return "\t".join([_copy_escape(v) if type(v) is str else "\\N" if v is None else str(v) for v in row]) + "\n"


def _copy_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


class _CopyStream(io.TextIOBase):
    """A file-like object whose read() renders rows on demand, so COPY streams in bounded memory."""

    def __init__(self, rows: Iterator[tuple], rows_per_chunk: int = 500) -> None:
        self.rows, self.rows_per_chunk, self.count = rows, rows_per_chunk, 0
        self.pending = ""

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> str:
        while size < 0 or len(self.pending) < size:
            chunk = list(itertools.islice(self.rows, self.rows_per_chunk))
            if not chunk:
                break
            self.count += len(chunk)
            self.pending += "".join(map(_copy_line, chunk))
        if size < 0:
            size = len(self.pending)
        out, self.pending = self.pending[:size], self.pending[size:]
        return out


def _update_run(run: Run, parsed: ParsedTrajectory, count: int) -> None:
    meta = parsed.meta
    run.n_steps = count
    run.trajectory_format = parsed.format
    run.import_warnings = list(parsed.warnings)
    fields = ["n_steps", "trajectory_format", "import_warnings"]
    known = {
        "tokens_in": meta.tokens_in,
        "tokens_out": meta.tokens_out,
        "cost_usd": meta.cost_usd,
        "duration_s": meta.duration_s,
        "started_at": meta.started_at,
    }
    for name, value in known.items():
        if value is not None:
            setattr(run, name, value)
            fields.append(name)
    if meta.task_name and not run.task_name:
        run.task_name = meta.task_name[:300]
        fields.append("task_name")
    run.save(update_fields=[*fields, "updated_at"])

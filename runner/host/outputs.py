"""What a finished sandbox leaves, stored as the run's artifacts: only regular files, bounded, redacted.

The submission, logs and code folders are the agent's, so nothing in them is trusted (see
runner.host.sandbox_files): links, FIFOs, devices, sockets and unreadable names are skipped with a note;
each file is copied through the job's Redactor into the runner's own folder first, so no stored byte
(file names included) holds a secret's value. Limits keep one agent from losing its run by writing
too much: the submission is stored first, then the trajectory and the agent's output, then the rest;
a file over the per-file limit is stored cut (the output log keeps its end, other files their
start), and once the run's total is reached the remaining files are skipped. Every cut and skip is
a note on the run (Run.import_warnings), so a reader sees what is missing and why. A file's name is
the agent's too ("~", " ", a newline, bytes that are not UTF-8, 50 extensions, hundreds of
characters): it is stored under a safe name derived from it and shown under its own (shortened with a
note past the longest an artifact's name holds); a file storage still refuses is skipped with a note,
in a savepoint of its own, so one odd name never costs the run its other files or its grade.

A submission.csv that is not a regular file, or is over the limit, makes the run's submission
invalid with the reason (`Stored.submission_problem`); it is never followed or read.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from runner.backends import SandboxSpec
from runner.backends.base import OUTPUT_LOG
from runner.host import sandbox_files
from runner.host.output_budget import Budget
from runner.host.secrets import Redactor

SUBMISSION_FILE = "submission.csv"
TRAJECTORY_FILE = "trajectory.jsonl"
# The logs the run's final trajectory is read from, the first present wins: Medalboard's JSONL, else
# AIDE's journal (its solution tree; agents/aide writes it to LOGS_DIR).
TRAJECTORY_ARTIFACTS = (f"logs/{TRAJECTORY_FILE}", "logs/journal.json")
OUTPUT_ARTIFACT = f"logs/{OUTPUT_LOG}"


class Artifact:
    """The kinds of a run's stored files, as leaderboard.models.Artifact.Kind names them."""

    class Kind:
        SUBMISSION, LOG, CODE, OTHER = "submission", "log", "code", "other"


@dataclass(frozen=True)
class Limits:
    file_bytes: int
    total_bytes: int
    files: int

    @classmethod
    def from_settings(cls) -> Limits:
        file_bytes = min(settings.JOB_OUTPUT_FILE_BYTES, settings.MAX_UPLOAD_BYTES)
        return cls(file_bytes, settings.JOB_OUTPUT_TOTAL_BYTES, settings.JOB_OUTPUT_MAX_FILES)


@dataclass
class Stored:
    has_submission: bool = False
    submission_problem: str = ""
    trajectory: Path | None = None  # the redacted copy, whole, for the final import; None if cut or absent
    trajectory_cut: bool = False
    trajectory_from: str = ""  # which of TRAJECTORY_ARTIFACTS it is (or was, if cut)
    notes: list[str] = field(default_factory=list)
    total: int = 0
    count: int = 0


@dataclass(frozen=True)
class _Source:
    root: Path  # folder the file is read from (never followed out of)
    rel: str  # path below root
    name: str  # artifact name
    kind: str
    keep_end: bool = False


class FileRefused(Exception):
    """The place a file is kept (the site's storage) refused this one file; the message says why."""


# store(kind, name, path): keep the staged, redacted copy at `path` as the run's file `name`; raises
# FileRefused for one file the store cannot take. A runner queues it for upload to the site (runner.remote).
Store = Callable[[str, str, Path], None]


def collect_outputs(spec: SandboxSpec, redactor: Redactor, store: Store, limits: Limits | None = None,
                    spent: Budget | None = None, *, name_chars: int) -> Stored:
    """Hand every file the run should keep to `store`, within the limits; returns what was kept and
    the notes on the rest (the notes name the agent's files, so they are redacted too: a file may be
    named after a secret). `name_chars`: the longest name a kept file may be shown under."""
    limits = limits or Limits.from_settings()
    stored = Stored(total=spent.total, count=spent.count) if spent else Stored()
    stage = spec.runner_dir / "stage"
    stage.mkdir(parents=True, exist_ok=True)
    sources, skipped = _sources(spec)
    stored.notes += skipped
    stored.submission_problem = _submission_problem(spec, limits)
    for source in sources:
        _store_one(store, source, stage, redactor, limits, stored, name_chars)
    stored.notes = [redactor.text(note) for note in stored.notes]
    stored.submission_problem = redactor.text(stored.submission_problem)
    return stored


def _sources(spec: SandboxSpec) -> tuple[list[_Source], list[str]]:
    first: list[_Source] = []
    rest: list[_Source] = []
    skipped: list[str] = []
    folders = [(spec.host_submission_dir, Artifact.Kind.SUBMISSION), (spec.host_logs_dir, Artifact.Kind.LOG),
               (spec.host_code_dir, Artifact.Kind.CODE)]
    if spec.workspace_dir is not None:  # a research task's final workspace, but the files it gave read-only
        folders.append((spec.workspace_dir, Artifact.Kind.CODE))
    for folder, kind in folders:
        listing = sandbox_files.walk(folder)
        skipped += [f"{folder.name}/{why}" for why in listing.skipped]
        for entry in listing.files:
            if folder == spec.workspace_dir and entry.rel in spec.read_only_files:
                continue
            name = f"{folder.name}/{entry.rel}"
            if name == OUTPUT_ARTIFACT:
                skipped.append(f"{name}: skipped, the name is the runner's record of the agent's output")
                continue
            is_submission = name == f"submission/{SUBMISSION_FILE}"
            source = _Source(folder, entry.rel, name, kind if is_submission or kind != Artifact.Kind.SUBMISSION
                             else Artifact.Kind.OTHER)
            (first if is_submission or name in TRAJECTORY_ARTIFACTS else rest).append(source)
    output = _Source(spec.runner_dir, OUTPUT_LOG, OUTPUT_ARTIFACT, Artifact.Kind.LOG, keep_end=True)
    first.sort(key=_first_rank)
    return [*first, output, *rest], skipped


def _first_rank(source: _Source) -> int:
    """The submission first, then the trajectory candidates in their order of preference."""
    return TRAJECTORY_ARTIFACTS.index(source.name) + 1 if source.name in TRAJECTORY_ARTIFACTS else 0


def _submission_problem(spec: SandboxSpec, limits: Limits) -> str:
    what = sandbox_files.describe(spec.host_submission_dir, SUBMISSION_FILE)
    if what:
        return f"{what}: the submission must be a regular file; it was not read"
    path = spec.host_submission_dir / SUBMISSION_FILE
    try:
        size = os.lstat(path).st_size
    except OSError:
        return ""
    if size > limits.file_bytes:
        return f"submission.csv is {size:,} bytes, over the {limits.file_bytes:,}-byte limit; it was not stored"
    return ""


def _store_one(store: Store, source: _Source, stage: Path, redactor: Redactor, limits: Limits, stored: Stored,
               name_chars: int) -> None:
    is_submission = source.name == f"submission/{SUBMISSION_FILE}"
    if is_submission and stored.submission_problem:
        return
    if stored.count >= limits.files:
        if stored.count == limits.files:
            stored.notes.append(f"more than {limits.files:,} files: {source.name} and the rest were not stored")
        stored.count += 1
        return
    room = limits.total_bytes - stored.total
    if room <= 0 and not is_submission:
        stored.notes.append(f"{source.name}: not stored, the run's outputs reached {limits.total_bytes:,} bytes")
        return
    copy = _copy(source, stage / f"{stored.count:06d}", redactor, min(limits.file_bytes, max(room, 0))
                 if not is_submission else limits.file_bytes, stored)
    if copy is None:
        return
    path, size, cut = copy
    name = _artifact_name(redactor.text(source.name), stored, name_chars)
    try:
        store(source.kind, name, path)
    except FileRefused as exc:  # one odd file never costs the run its others, nor its grade
        stored.notes.append(f"{name}: not stored, {redactor.text(str(exc))}")
        return
    stored.total += size
    stored.count += 1
    stored.has_submission |= is_submission
    if source.name in TRAJECTORY_ARTIFACTS and not stored.trajectory_from:
        stored.trajectory_from = source.name
        stored.trajectory, stored.trajectory_cut = (None, True) if cut else (path, False)


def _artifact_name(name: str, stored: Stored, most: int) -> str:
    """The name shown for a stored file: the agent's own (any characters; bytes that are not UTF-8
    shown as U+FFFD), shortened with a note when an artifact's name cannot hold it."""
    if len(name) <= most:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:16]
    short = f"{name[:most - 40]}...{digest}"
    stored.notes.append(f"{short}: its name is {len(name):,} characters long, shown shortened "
                        f"(the limit is {most})")
    return short


def _copy(source: _Source, target: Path, redactor: Redactor, limit: int,
          stored: Stored) -> tuple[Path, int, bool] | None:
    """The source copied, cut to `limit` and redacted, into `target`, with its size and whether it was
    cut; None (with a note) if it is not a regular file."""
    try:
        with sandbox_files.open_regular(source.root, source.rel) as f:
            size = os.fstat(f.fileno()).st_size
            cut = size > limit
            if cut:
                what = "end" if source.keep_end else "first"
                stored.notes.append(f"{source.name}: {size:,} bytes, stored cut to its {what} {limit:,} bytes "
                                    "(the per-file or per-run output limit)")
                if source.keep_end:
                    f.seek(size - limit)
            with open(target, "wb") as out:
                edges = {"cut_start": cut and source.keep_end, "cut_end": cut and not source.keep_end}
                for chunk in redactor.stream(sandbox_files.read_at_most(f, limit), **edges):
                    out.write(chunk)
    except FileNotFoundError:
        return None
    except sandbox_files.NotRegular as exc:
        if source.name == f"submission/{SUBMISSION_FILE}":  # swapped since it was looked at: still invalid
            stored.submission_problem = f"{exc}: the submission must be a regular file; it was not read"
        else:
            stored.notes.append(f"{source.name.removesuffix(source.rel)}{exc}: skipped")  # code/, logs/
        return None
    return target, target.stat().st_size, cut

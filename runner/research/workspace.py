"""A research task's workspace on the runner: the agent's writable copy of env/, its snapshots, the
check of the files the task gives read-only, and the copy a grading sandbox scores.

Everything the agent may have written is read through runner.host.sandbox_files (no link followed, no
FIFO opened, nothing read past a limit), and every copy the runner makes of it is held to a
runner.host.output_budget.Budget (files, size per file, total; apparent sizes, so a sparse file counts at
its full length); the task's stored env/ is the site's own copy.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from runner.host import sandbox_files
from runner.host.output_budget import Budget

SNAPSHOT_FILE_BYTES = 64 << 20  # a workspace file bigger than this (a checkpoint) is left out of snapshots
GRADING_COPY = "the copy its eval scored"


def copy_env(env: Path, target: Path) -> None:
    """The task's env/ copied into `target` (the workspace); files, never links."""
    target.mkdir(parents=True, exist_ok=True)
    listing = sandbox_files.walk(env, hard_links=True)  # the site's own copy
    for entry in listing.files:
        destination = target / entry.rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(env / entry.rel, destination, follow_symlinks=False)


def read_only_changes(workspace: Path, expected: dict[str, str]) -> list[str]:
    """Each read-only file the agent changed, removed or replaced, as '<path>: what happened'."""
    changes = []
    for rel, digest in sorted(expected.items()):
        try:
            with sandbox_files.open_regular(workspace, rel) as f:
                found = _sha256(f)
        except FileNotFoundError:
            changes.append(f"{rel}: deleted")
            continue
        except sandbox_files.NotRegular as exc:
            changes.append(f"{rel}: replaced ({exc})")
            continue
        if found != digest:
            changes.append(f"{rel}: changed")
    return changes


def fingerprint(workspace: Path, read_only: set[str]) -> tuple:
    """What changes when the agent writes a file of its workspace (name, size, modification time)."""
    return tuple((e.rel, e.size, e.mtime_ns) for e in sandbox_files.walk(workspace).files if e.rel not in read_only)


@dataclass
class Copied:
    notes: list[str] = field(default_factory=list)  # what was left out, and why
    complete: bool = True  # False if a file was left out for the total or the file count (not its own size)


def copy_files(source: Path, target: Path, skip: set[str], budget: Budget, what: str) -> Copied:
    """The regular files below `source` (the agent's) copied to `target`, but those in `skip`, each
    charged to `budget` by its apparent size (a sparse file counts at its full length) and copied no
    further than that; a file the budget refuses is left out with a note naming `what` was copied."""
    listing = sandbox_files.walk(source)
    copied = Copied(notes=list(listing.skipped))
    for entry in listing.files:
        if entry.rel in skip:
            continue
        try:
            with sandbox_files.open_regular(source, entry.rel) as f:
                size = os.fstat(f.fileno()).st_size
                why = budget.refusal(size)
                if why:
                    copied.notes.append(left_out_note(entry.rel, why, what))
                    copied.complete &= budget.over_file_limit(size)
                    continue
                budget.take(size)
                destination = target / entry.rel
                destination.parent.mkdir(parents=True, exist_ok=True)
                with open(destination, "wb") as out:
                    for chunk in sandbox_files.read_at_most(f, size):
                        out.write(chunk)
        except FileNotFoundError:
            continue
        except sandbox_files.NotRegular as exc:
            copied.notes.append(f"{exc}: skipped")
    return copied


def left_out_note(rel: str, why: str, what: str = GRADING_COPY) -> str:
    return f"{rel}: {why}; left out of {what}"


def grading_copy(files: Path, env: Path, read_only: set[str], target: Path, budget: Budget) -> list[str]:
    """What the eval scores: the agent's files within `budget`, with the task's read-only files as the
    task gave them (an agent's edit of one never changes its own score); returns notes on what was
    left out."""
    notes = copy_files(files, target, skip=read_only, budget=budget, what=GRADING_COPY).notes
    for rel in read_only:
        if (env / rel).is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(env / rel, target / rel, follow_symlinks=False)
    return notes


def left_out_of_grading(files: Path, read_only: set[str], budget: Budget) -> list[tuple[str, str]]:
    """The files of `files` that grading_copy would leave out, by their sizes now, and why, copying
    nothing: a runner attached by URL uploads the workspace stored cut at the limits, and this list
    tells the site's research grading side which files its eval's copy leaves out."""
    left_out = []
    for entry in sandbox_files.walk(files).files:
        if entry.rel in read_only:
            continue
        why = budget.refusal(entry.size)
        if why:
            left_out.append((entry.rel, why))
        else:
            budget.take(entry.size)
    return left_out


def _sha256(f) -> str:
    digest = hashlib.sha256()
    for chunk in iter(lambda: f.read(1 << 20), b""):
        digest.update(chunk)
    return digest.hexdigest()

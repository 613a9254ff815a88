"""A research task's workspace on the runner: the agent's writable copy of env/, its snapshots, the
check of the files the task gives read-only, and the copy a grading sandbox scores.

Everything the agent may have written is read through runner.sandbox_files (no link followed, no
FIFO opened, nothing read past a limit); the task's stored env/ is the site's own copy.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from runner import sandbox_files

SNAPSHOT_FILE_BYTES = 64 << 20  # a workspace file bigger than this (a checkpoint) is left out of snapshots


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


def copy_files(source: Path, target: Path, skip: set[str], max_file_bytes: int | None = None) -> list[str]:
    """The regular files below `source` (the agent's) copied to `target`, but those in `skip`;
    returns notes on what was left out."""
    listing = sandbox_files.walk(source)
    notes = list(listing.skipped)
    for entry in listing.files:
        if entry.rel in skip:
            continue
        if max_file_bytes is not None and entry.size > max_file_bytes:
            notes.append(f"{entry.rel}: {entry.size:,} bytes, left out of the snapshot")
            continue
        try:
            with sandbox_files.open_regular(source, entry.rel) as f:
                destination = target / entry.rel
                destination.parent.mkdir(parents=True, exist_ok=True)
                with open(destination, "wb") as out:
                    for chunk in sandbox_files.read_at_most(f, entry.size):
                        out.write(chunk)
        except FileNotFoundError:
            continue
        except sandbox_files.NotRegular as exc:
            notes.append(f"{exc}: skipped")
    return notes


def grading_copy(files: Path, env: Path, read_only: set[str], target: Path) -> None:
    """What the eval scores: the agent's files, with the task's read-only files as the task gave them
    (an agent's edit of one never changes its own score)."""
    copy_files(files, target, skip=read_only)
    for rel in read_only:
        if (env / rel).is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(env / rel, target / rel, follow_symlinks=False)


def _sha256(f) -> str:
    digest = hashlib.sha256()
    for chunk in iter(lambda: f.read(1 << 20), b""):
        digest.update(chunk)
    return digest.hexdigest()

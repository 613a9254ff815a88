"""A task's scratch folder: bounded in size while the agent runs, deleted once its outputs are stored.

Where the runner is root and the machine has loop devices, the folder is a file system of its own:
ext4 in a sparse image file of the quota's size, mounted nosuid,nodev. A write past the quota then
fails inside the sandbox with "no space left on device", and the runner's own disk never fills; the
image takes only the space the agent really wrote. Elsewhere (a runner that is not root) the
supervisor measures the folder every QUOTA_CHECK_S and stops the agent once it is over the quota, a
bound an agent can overshoot by what it writes in one interval; `enforced` says which one holds.

`clean_stale(work_dir, keep)` removes what a killed runner left: scratch folders, their images and
mounts, and the runner's own folders beside them, for tasks that no longer run.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from runner.host import sandbox_files

log = logging.getLogger(__name__)
QUOTA_CHECK_S = 5.0
TASK_FOLDER = re.compile(r"^task-(\d+)-a\d+(\.runner|\.img)?$")


class Scratch:
    def __init__(self, path: Path, quota_bytes: int, mount: bool = True) -> None:
        self.path, self.quota_bytes, self.want_mount = path, quota_bytes, mount
        self.mounted = False
        self.last_check = time.monotonic()

    @property
    def image(self) -> Path:
        return self.path.parent / f"{self.path.name}.img"

    @property
    def enforced(self) -> str:
        return "file system quota" if self.mounted else f"measured every {QUOTA_CHECK_S:g} s"

    def create(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        if self.want_mount and os.getuid() == 0 and shutil.which("mkfs.ext4") and not os.path.ismount(self.path):
            self.mounted = self._mount()

    def used_bytes(self) -> int:
        if self.mounted:
            info = os.statvfs(self.path)
            return (info.f_blocks - info.f_bfree) * info.f_frsize
        listing = sandbox_files.walk(self.path, hard_links=True)
        if any("cannot be" in why for why in listing.skipped):  # a folder closed to the runner: open it again
            sandbox_files.open_up(self.path)
            listing = sandbox_files.walk(self.path, hard_links=True)
        return sum(entry.size for entry in listing.files)

    def over_quota(self) -> bool:
        return not self.mounted and self.used_bytes() > self.quota_bytes

    def over_quota_due(self) -> bool:
        """`over_quota`, measured at most every QUOTA_CHECK_S (a supervisor asks at every poll)."""
        if time.monotonic() - self.last_check < QUOTA_CHECK_S:
            return False
        self.last_check = time.monotonic()
        return self.over_quota()

    @property
    def quota_note(self) -> str:
        return f"stopped: the agent wrote more than the {self.quota_bytes:,}-byte disk quota of its folders"

    def delete(self) -> None:
        _unmount(self.path)
        _remove_tree(self.path)
        self.image.unlink(missing_ok=True)

    def _mount(self) -> bool:
        try:
            with open(self.image, "wb") as image:
                image.truncate(self.quota_bytes)
            _run("mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", str(self.image))
            _run("mount", "-o", "loop,nosuid,nodev", str(self.image), str(self.path))
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("scratch %s: no file system quota (%s); measuring instead", self.path.name, exc)
            self.image.unlink(missing_ok=True)
            return False
        (self.path / "lost+found").rmdir()
        return True


def clean_stale(work_dir: Path, keep: set[int]) -> int:
    """Remove the scratch of every task not in `keep` (ids of tasks this runner still holds)."""
    removed = 0
    for entry in sorted(work_dir.iterdir()) if work_dir.is_dir() else []:
        match = TASK_FOLDER.match(entry.name)
        if match is None or int(match.group(1)) in keep:
            continue
        if entry.suffix == ".img":
            entry.unlink(missing_ok=True)
        else:
            _unmount(entry)
            _remove_tree(entry)
        removed += 1
    return removed


def _remove_tree(path: Path) -> None:
    """The folder and everything in it, folders the agent closed to the runner (mode 000) included."""
    sandbox_files.open_up(path)
    shutil.rmtree(path, ignore_errors=True)


def _unmount(path: Path) -> None:
    if os.path.ismount(path):
        try:
            _run("umount", str(path))
        except subprocess.SubprocessError:
            _run("umount", "-l", str(path))  # busy (a process still in it): detach now, freed when it ends


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=60)

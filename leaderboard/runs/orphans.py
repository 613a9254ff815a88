"""Files nobody owns: what a request killed mid-upload leaves behind, found and deleted by the sweep.

An upload writes its files to artifact storage inside the transaction that creates their rows, and
deletes them if anything fails. A worker killed at the wrong moment (SIGKILL, out of memory, a
timeout) runs no clean-up: its files stay in storage with no row naming them, and its scratch
folder stays in the temporary directory. The periodic sweep (runner.jobs.sweep.sweep) calls
`sweep_orphans_when_due`, which at most once per ORPHAN_SWEEP_INTERVAL_S deletes

- files under the upload folders of artifact storage (`runs/`, `trajectories/`, and `intake/`, where
  requests stage uploads for the worker: leaderboard.runs.intake) that no row names and that are older
  than ORPHAN_GRACE_S (a younger file may belong to an upload still running);
- files in FILE_UPLOAD_TEMP_DIR (where Django spools a large upload while the request reads it)
  older than the grace, counted with the orphaned files;
- Medalboard's scratch folders (SCRATCH_PREFIXES in the temporary directory) older than the grace.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import Storage, default_storage
from django.db import models
from django.utils import timezone

from leaderboard.models import Trajectory

log = logging.getLogger(__name__)
UPLOAD_FOLDERS = ("runs", "trajectories", "intake")
# The scratch folders of uploads, grading, format checks and snapshots (all bounded by request or task
# time limits far below the grace period).
SCRATCH_PREFIXES = ("medalboard-upload-", "medalboard-grade-", "medalboard-check-", "medalboard-snapshot-")


def sweep_orphans_when_due() -> dict[str, int]:
    """The orphan sweep, if no other sweep of this cache ran it within ORPHAN_SWEEP_INTERVAL_S
    (the counts are zero when it was not due)."""
    if not cache.add("orphan-sweep", 1, settings.ORPHAN_SWEEP_INTERVAL_S):
        return {"orphan_files_deleted": 0, "scratch_folders_deleted": 0}
    return sweep_orphans()


def sweep_orphans(*, storage: Storage = default_storage, scratch: Path | None = None) -> dict[str, int]:
    cutoff = timezone.now() - timedelta(seconds=settings.ORPHAN_GRACE_S)
    known = stored_names()
    files = 0
    for name in _stored_files(storage):
        if name not in known and _older(storage, name, cutoff):
            storage.delete(name)
            files += 1
    if settings.FILE_UPLOAD_TEMP_DIR:
        files += _sweep_upload_temp(Path(settings.FILE_UPLOAD_TEMP_DIR), cutoff)
    folders = _sweep_scratch(Path(scratch or tempfile.gettempdir()), cutoff)
    if files or folders:
        log.warning("deleted %s orphaned file(s) and %s stale scratch folder(s)", files, folders)
    return {"orphan_files_deleted": files, "scratch_folders_deleted": folders}


def stored_names() -> set[str]:
    """Every storage name a row holds: each FileField of every model, the trajectory files and their
    search indexes, and the staged files of intakes not yet imported."""
    from leaderboard.runs.intake import staged_names
    from leaderboard.trajectories.store.search_index import index_name

    trajectories = set(Trajectory.objects.values_list("file", flat=True))
    names = trajectories | {index_name(name) for name in trajectories} | staged_names()
    for model in apps.get_models():
        for field in model._meta.get_fields():
            if isinstance(field, models.FileField):
                names.update(model._default_manager.exclude(**{field.name: ""}).values_list(field.name, flat=True))
    return names


def _stored_files(storage: Storage, folder: str = "") -> Iterator[str]:
    tops = UPLOAD_FOLDERS if not folder else ()
    try:
        subfolders, files = storage.listdir(folder) if folder else (tops, [])
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in files:
        yield f"{folder}/{name}"
    for sub in subfolders:
        yield from _stored_files(storage, f"{folder}/{sub}" if folder else sub)


def _older(storage: Storage, name: str, cutoff: datetime) -> bool:
    try:
        return storage.get_modified_time(name) < cutoff
    except (FileNotFoundError, NotImplementedError):
        return False


def _modified(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.get_current_timezone())
    except FileNotFoundError:
        return None


def _sweep_upload_temp(folder: Path, cutoff: datetime) -> int:
    """Files Django spooled for requests that never finished (a finished one deletes or moves its file)."""
    deleted = 0
    for path in folder.glob("*"):
        modified = _modified(path)
        if modified is not None and path.is_file() and modified < cutoff:
            path.unlink(missing_ok=True)
            deleted += 1
    return deleted


def _sweep_scratch(root: Path, cutoff: datetime) -> int:
    deleted = 0
    for folder in (p for prefix in SCRATCH_PREFIXES for p in root.glob(f"{prefix}*")):
        modified = _modified(folder)
        if modified is not None and folder.is_dir() and modified < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            deleted += 1
    return deleted

"""A competition's public data as a runner fetches it: a manifest of its regular files by content
hash (computed once per state of the folder, then cached), and each file served by its hash, only
to a runner holding a task of that competition. The answers are never in a public folder, so never
in a manifest."""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.core.cache import cache

from runner.jobs import recipes

MANIFEST_TTL_S = 24 * 3600


def manifest(folder: Path, tick=lambda: None) -> dict:
    """{"version": the folder's content hash, "files": [{"path", "sha256", "size"}]}; links are left
    out (a runner gets regular files only), as runner.jobs.recipes hashes them without following them."""
    entries = recipes.listing(folder, tick)
    signature = recipes.listing_signature(entries)
    key = "runner-data:" + hashlib.sha256(f"{folder}\0{signature}".encode()).hexdigest()
    found = cache.get(key)
    if found is None:
        files = [
            {"path": e.path, "sha256": recipes.file_hash(folder / e.path, tick), "size": e.size}
            for e in entries
            if e.kind == "file"
        ]
        found = {"version": recipes.hash_lines(f"{f['path']}\0{f['sha256']}" for f in files), "files": files}
        # the run's recipe's version
        recipes.remember(folder, entries, {str(f["path"]): str(f["sha256"]) for f in files})
        cache.set(key, found, MANIFEST_TTL_S)
    return found


def file_by_hash(folder: Path, sha256: str) -> Path | None:
    """The public file whose content hash is `sha256`, or None."""
    for item in manifest(folder)["files"]:
        if item["sha256"] == sha256:
            return folder / item["path"]
    return None

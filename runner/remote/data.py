"""The public data of a task on a remote runner: each file fetched from the site by its sha256,
checked, and kept in the cache folder by that hash, so a second task of the same competition (or
another competition sharing files) fetches nothing. A task's data folder is a tree of hard links
to the cached files, named by the manifest's version, made read-only. The runner's slots share the
cache: one builds a version's folder while another that needs it waits (a lock file per version),
and each fetch writes a partial file of its own before it is renamed into place.

A runner that already has MLE-bench's prepared data (`mlebench prepare`) names its folder
(MEDALBOARD_RUNNER_DATA_DIR: `<id>/prepared/public/...` beneath it): a file there whose sha256 is the
one the site names is copied into the cache instead of fetched; any other is fetched."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import threading
import time
from pathlib import Path, PurePosixPath

from runner.client import SiteClient, file_sha256, part_of

LOCK_POLL_S = 0.2


class DataCache:
    def __init__(self, root: Path, prepared: Path | None = None) -> None:
        self.root, self.blobs, self.trees, self.prepared = root, root / "blobs", root / "data", prepared
        self.fetched = 0  # files fetched from the site (the rest came from the cache or `prepared`)
        self.counting = threading.Lock()

    def folder(self, client: SiteClient, claim: dict, tick=lambda: None) -> Path:
        manifest = claim["data"]
        tree, done = self.trees / manifest["version"], self.trees / f"{manifest['version']}.complete"
        if done.is_file():
            return tree
        with locked(self.trees / f"{manifest['version']}.lock", tick):  # another slot may be building it
            if not done.is_file():
                self._build(client, claim, tree, tick)
                done.touch()
        return tree

    def _build(self, client: SiteClient, claim: dict, tree: Path, tick) -> None:
        partial = tree.with_name(tree.name + ".part")
        shutil.rmtree(partial, ignore_errors=True)
        for item in claim["data"]["files"]:
            tick()
            blob = self._blob(client, claim, item["sha256"], self._local(claim, item["path"]))
            target = partial / _safe(item["path"])
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(blob, target)
        partial.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tree, ignore_errors=True)
        partial.rename(tree)

    def _local(self, claim: dict, relative: str) -> Path | None:
        if self.prepared is None:
            return None
        return self.prepared / claim["competition"] / "prepared" / "public" / _safe(relative)

    def _blob(self, client: SiteClient, claim: dict, sha256: str, local: Path | None) -> Path:
        path = self.blobs / sha256[:2] / sha256
        if path.is_file() and file_sha256(path) == sha256:  # a damaged cache entry is fetched again
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        if local is not None and local.is_file() and not local.is_symlink() and file_sha256(local) == sha256:
            partial = part_of(path)
            shutil.copyfile(local, partial)
            partial.rename(path)
        else:
            client.fetch(claim, sha256, path)
        path.chmod(0o444)
        with self.counting:
            self.fetched += 1
        return path


@contextlib.contextmanager
def locked(path: Path, tick=lambda: None):
    """`path` locked for this holder alone (another slot's thread or another runner on the same
    cache waits); `tick` is called while waiting, so the waiter's lease is renewed meanwhile."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                tick()
                time.sleep(LOCK_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _safe(relative: str) -> Path:
    """A manifest's path, refused if it would leave the data folder."""
    parts = PurePosixPath(relative).parts
    if not parts or relative.startswith("/") or ".." in parts:
        raise ValueError(f"a data path outside the data folder: {relative!r}")
    return Path(*parts)

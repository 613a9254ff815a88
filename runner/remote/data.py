"""The public data of a task on a remote runner: each file fetched from the site by its sha256,
checked, and kept in the cache folder by that hash, so a second task of the same competition (or
another competition sharing files) fetches nothing. A task's data folder is a tree of hard links
to the cached files, named by the manifest's version, made read-only.

A runner that already has MLE-bench's prepared data (`mlebench prepare`) names its folder
(MEDALBOARD_RUNNER_DATA_DIR: `<id>/prepared/public/...` beneath it): a file there whose sha256 is the
one the site names is copied into the cache instead of fetched; any other is fetched."""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

from runner.client import SiteClient, file_sha256


class DataCache:
    def __init__(self, root: Path, prepared: Path | None = None) -> None:
        self.root, self.blobs, self.trees, self.prepared = root, root / "blobs", root / "data", prepared
        self.fetched = 0  # files fetched from the site (the rest came from the cache or `prepared`)

    def folder(self, client: SiteClient, claim: dict, tick=lambda: None) -> Path:
        manifest = claim["data"]
        tree, done = self.trees / manifest["version"], self.trees / f"{manifest['version']}.complete"
        if done.is_file():
            return tree
        partial = tree.with_name(tree.name + ".part")
        shutil.rmtree(partial, ignore_errors=True)
        for item in manifest["files"]:
            tick()
            blob = self._blob(client, claim, item["sha256"], self._local(claim, item["path"]))
            target = partial / _safe(item["path"])
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(blob, target)
        partial.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tree, ignore_errors=True)
        partial.rename(tree)
        done.touch()
        return tree

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
            partial = path.with_name(path.name + ".part")
            shutil.copyfile(local, partial)
            partial.rename(path)
        else:
            client.fetch(claim, sha256, path)
        path.chmod(0o444)
        self.fetched += 1
        return path


def _safe(relative: str) -> Path:
    """A manifest's path, refused if it would leave the data folder."""
    parts = PurePosixPath(relative).parts
    if not parts or relative.startswith("/") or ".." in parts:
        raise ValueError(f"a data path outside the data folder: {relative!r}")
    return Path(*parts)

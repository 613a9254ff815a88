"""An MLE-bench-packaged agent (runner.agents) as a remote runner gets it: the claim names the agent's
files by content hash (those of the folders its version hashes: its config.yaml's, its Dockerfile's
and its start.sh's), the runner fetches each from `tasks/<id>/agent/<sha256>/`, checks it, builds the
image on its own Docker host (runner.remote.agents) and runs it under MLE-bench's contract
(runner.agents.contract). Only the job's own version is ever served: the site's folder must still
hold it (its files hash to the job's version), or the task fails saying so.

A runner attached over the API can take such a task when it has the job's image, or when it is a
Docker runner with the `mlebench-env` base, on which it builds the image itself."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from django.conf import settings
from django.core.cache import cache

from runner.agents import base_image
from runner.agents.job_package import is_packaged, package_of
from runner.agents.mlebench import AgentFormatError, Limits, Variant, read_agents
from runner.jobs import recipes
from runner.models import Job, Runner

MANIFEST_TTL_S = 24 * 3600


def servable(runner: Runner, job: Job, image: str) -> bool:
    """Whether `runner` can run the job's agent: it has `image` (or runs any, a local runner), or it
    builds a packaged agent's image itself (an API runner on Docker with the mlebench-env base). A
    packaged agent runs on Docker runners only."""
    if is_packaged(job) and runner.backend != Runner.Backend.DOCKER:
        return False
    images = set(runner.images)
    if "*" in images or image in images:
        return True
    return is_packaged(job) and base_image.builds_images(runner)


def describe(job: Job) -> dict | None:
    """The claim's `agent` for a packaged agent (None for the site's own): its variant as the job took
    it (its folder's path on the site left out), its image, the names of the job's secrets it may
    resolve, and its files."""
    if not is_packaged(job):
        return None
    package = package_of(job)
    variant = Variant.from_config(package)
    if variant.privileged and not settings.AGENTS_ALLOW_PRIVILEGED:
        raise RuntimeError(
            f"the agent {variant.id} asks for a privileged container, which this site refuses "
            "(MEDALBOARD_AGENTS_ALLOW_PRIVILEGED is off)"
        )
    return {
        "name": job.agent.name,
        "version": job.agent_version or variant.version,
        "image": job.agent_image or variant.image,
        "package": {key: value for key, value in package.items() if key not in ("source_dir", "build_error")},
        "secrets": sorted(job.secrets()),
        "files": manifest(job)["files"],
    }


def manifest(job: Job) -> dict:
    """{"files": [{"path", "sha256", "size", "executable"} or {"path", "link"}]}, paths relative to
    the agents folder; cached while the folders' listing is unchanged. RuntimeError when the site's
    folder no longer holds the job's version."""
    variant = Variant.from_config(package_of(job))
    version = job.agent_version or variant.version
    root = Path(variant.source_dir)
    folders = sorted({str(Path(p).parent) for p in (variant.config_file, variant.dockerfile, variant.start)})
    try:
        listed = [(folder, recipes.listing(root / folder)) for folder in folders]
    except OSError as exc:
        raise RuntimeError(f"the folder of the agent {variant.id} is not on the site: {exc}") from None
    signature = recipes.hash_lines(f"{folder}\0{recipes.listing_signature(entries)}" for folder, entries in listed)
    key = "runner-agent:" + hashlib.sha256(f"{root}\0{version}\0{signature}".encode()).hexdigest()
    found = cache.get(key)
    if found is None:
        _check_version(root, variant.id, version)
        found = {"files": [_entry(root, folder, e) for folder, entries in listed for e in entries]}
        cache.set(key, found, MANIFEST_TTL_S)
    return found


def file_by_hash(job: Job, sha256: str) -> Path | None:
    """The agent's file whose content hash is `sha256`, or None."""
    root = Path(Variant.from_config(package_of(job)).source_dir)
    for item in manifest(job)["files"]:
        if item.get("sha256") == sha256:
            return root / item["path"]
    return None


def _check_version(root: Path, agent_id: str, version: str) -> None:
    limits = Limits(settings.AGENTS_MAX_FOLDER_BYTES, settings.AGENTS_MAX_FILES, allow_privileged=True)
    try:
        found = {v.id: v for v in read_agents(root, limits, refused={})}.get(agent_id)
    except AgentFormatError as exc:
        raise RuntimeError(f"the folder of the agent {agent_id} on the site cannot be read: {exc}") from None
    if found is None or found.version != version:
        raise RuntimeError(
            f"the agent {agent_id}: {root} on the site no longer holds the job's version "
            f"{version[:16]} (re-imported since?); a runner builds only the version a job took"
        )


def _entry(root: Path, folder: str, entry: recipes.Entry) -> dict:
    relative = (Path(folder) / entry.path).as_posix()
    if entry.kind == "link":
        return {"path": relative, "link": entry.target}
    path = root / relative
    mode = os.lstat(path).st_mode
    return {
        "path": relative,
        "sha256": recipes.file_hash(path),
        "size": entry.size,
        "executable": bool(stat.S_IMODE(mode) & 0o111),
    }

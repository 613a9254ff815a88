"""An MLE-bench-packaged agent on a remote runner: its folder, its image, its sandbox.

    spec = prepare(client, claim, backend, spec, root=cache_dir / "agents")

The claim's `agent` names the agent's files by sha256 (runner.api_v1.agents). Each is fetched from
the site once, checked against its hash and kept under `root/blobs` by it; the agent's folder is
put together under `root/trees/<version>` and read as the site's importer reads it
(runner.agents.mlebench: paths, links, bounds, the Dockerfile's check), and its files must hash to
the job's version. The image is built on this Docker host by the builder
(runner.agents.images: FROM the local mlebench-env, MEDALBOARD_AGENTS_BUILD_NETWORK, the hostile-build
checks) and kept: its tag names the version, so a second task of the same version builds and
fetches nothing. The sandbox is MLE-bench's contract (runner.agents.contract).

What cannot be built or run here raises AgentUnavailable with the reason, which the task reports as
its failure. The lease is renewed while the files come and the image builds.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import shutil
import threading
from pathlib import Path

from django.conf import settings

from runner.agents import base_image, images
from runner.agents.contract import adapt_variant
from runner.agents.mlebench import AgentFormatError, Limits, Variant, read_agents
from runner.backends import SandboxSpec
from runner.client import ApiError, Fenced, Forbidden, Revoked, SiteClient, file_sha256
from runner.remote.data import _safe, locked

log = logging.getLogger(__name__)
MAX_ERROR_CHARS = 4000


class AgentUnavailable(Exception):
    """The task's agent cannot be built or run on this runner; the message says why."""


def prepare(client: SiteClient, claim: dict, backend, spec: SandboxSpec, *, root: Path) -> SandboxSpec:
    """`spec` with the agent's image (built here if missing) and MLE-bench's command, env and /home."""
    agent = claim["agent"]
    if backend.name != "docker":
        raise AgentUnavailable(f"the MLE-bench agent {agent['name']} runs only on Docker runners, not {backend.name}")
    variant = Variant.from_config({**agent["package"], "source_dir": ""})
    secrets = {name: spec.env[name] for name in agent["secrets"] if name in spec.env}
    try:  # before the build: a refusal costs nothing
        spec = adapt_variant(
            spec,
            variant,
            name=agent["name"],
            competition=claim["competition"],
            backend=backend,
            paths=backend.paths(spec),
            secrets=secrets,
            allow_privileged=settings.AGENTS_ALLOW_PRIVILEGED,
        )
    except RuntimeError as exc:
        raise AgentUnavailable(str(exc)) from None
    every = claim["timing"]["poll_s"] * 5
    with Renewing(every, lambda: client.renew(claim)):
        image = Images(root).image(client, claim, backend.client)
    return dataclasses.replace(spec, image=image)


def adapter(client: SiteClient, claim: dict, backend, root: Path):
    """`prepare` for the task's spec (None for an agent of the site's own): runner.remote.llm calls it
    once the provider keys in the spec are the sandbox's run token, so a variant's
    `${{ secrets.OPENAI_API_KEY }}` resolves to that, never to the key."""
    if not claim.get("agent"):
        return None
    return functools.partial(prepare, client, claim, backend, root=root)


def recipe(claim: dict, backend, spec: SandboxSpec) -> dict:
    """The run's recipe's `agent`, as the site records it (runner.jobs.recipes)."""
    agent = claim["agent"]
    return {
        "name": agent["name"],
        "version": agent["version"],
        "image": spec.image,
        "image_id": backend.client.images.get(spec.image).id,
        "command": spec.command,
    }


class Images:
    def __init__(self, root: Path) -> None:
        self.blobs, self.trees, self.builds = root / "blobs", root / "trees", root / "builds"
        self.fetched = 0  # files fetched from the site (the rest came from the cache)

    def image(self, client: SiteClient, claim: dict, engine) -> str:
        """The agent's image tag: the one here if it holds this version on the current base, else
        built from the fetched folder. One build of a version at a time on this host: a slot (or a
        runner sharing this cache) that needs the image another is building waits, then finds it."""
        agent = claim["agent"]
        with locked(self.builds / f"{agent['version']}.lock"):
            if _current(engine, agent["image"], agent["version"]):
                log.info("agent %s: image %s is here already", agent["name"], agent["image"])
                return agent["image"]
            variant = self.variant(client, claim)
            try:
                built = images.build_image(variant, client=engine, log=lambda line: log.info("%s", line))
            except images.AgentBuildError as exc:
                raise AgentUnavailable(
                    _cut(f"the image of the agent {agent['name']} did not build on this runner: {exc}")
                ) from None
        log.info("agent %s: image %s %s", agent["name"], built["image"], "built" if built["built"] else "kept")
        return built["image"]

    def variant(self, client: SiteClient, claim: dict, tick=lambda: None) -> Variant:
        """The agent's variant, read from its folder here, which must hash to the job's version. A slot
        that needs the folder while another puts it together waits for it (`tick` while it waits)."""
        agent = claim["agent"]
        tree = self.trees / agent["version"]
        done = tree.with_name(tree.name + ".complete")
        if not done.is_file():
            with locked(self.trees / f"{agent['version']}.lock", tick):
                if not done.is_file():
                    self._assemble(client, claim, tree)
                    done.touch()
        try:
            return self._verified(tree, agent)
        except AgentUnavailable:
            done.unlink(missing_ok=True)  # a damaged folder is fetched again next time
            raise

    def _assemble(self, client: SiteClient, claim: dict, tree: Path) -> None:
        files = claim["agent"]["files"]
        _check_bounds(files)
        partial = tree.with_name(tree.name + ".part")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        try:
            for item in [f for f in files if "link" not in f]:  # files first: no link is on a file's way
                target = partial / _safe(item["path"])
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(self._blob(client, claim, item["sha256"]), target)
                target.chmod(0o755 if item.get("executable") else 0o644)
            for item in [f for f in files if "link" in f]:
                target = partial / _safe(item["path"])
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(item["link"], target)
        except (ApiError, OSError, ValueError) as exc:
            if isinstance(exc, Revoked | Forbidden | Fenced):  # not the agent's fault: the task is no longer ours
                raise
            raise AgentUnavailable(
                f"the folder of the agent {claim['agent']['name']} could not be fetched: {exc}"
            ) from None
        shutil.rmtree(tree, ignore_errors=True)
        partial.rename(tree)

    def _blob(self, client: SiteClient, claim: dict, sha256: str) -> Path:
        path = self.blobs / sha256[:2] / sha256
        if path.is_file() and file_sha256(path) == sha256:  # a damaged cache entry is fetched again
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        client.fetch(claim, sha256, path, what="agent")
        path.chmod(0o444)
        self.fetched += 1
        return path

    @staticmethod
    def _verified(tree: Path, agent: dict) -> Variant:
        refused: dict[str, str] = {}
        limits = Limits(settings.AGENTS_MAX_FOLDER_BYTES, settings.AGENTS_MAX_FILES, allow_privileged=True)
        try:
            found = {v.id: v for v in read_agents(tree, limits, refused=refused)}.get(agent["package"]["id"])
        except AgentFormatError as exc:
            raise AgentUnavailable(f"the folder of the agent {agent['name']} as fetched is refused: {exc}") from None
        if agent["package"]["id"] in refused:
            raise AgentUnavailable(refused[agent["package"]["id"]])
        if found is None or found.version != agent["version"]:
            raise AgentUnavailable(
                f"the folder of the agent {agent['name']} as fetched does not hash to the job's "
                f"version {agent['version'][:16]}"
            )
        return found


def _current(engine, tag: str, version: str) -> bool:
    """Whether `tag` is here, built from this version on the mlebench-env here now (as build_image
    decides whether to build again)."""
    found, base = _get(engine, tag), _get(engine, base_image.TAG)
    if found is None:
        return False
    labels = (found.attrs.get("Config") or {}).get("Labels") or {}
    return labels.get(images.LABEL) == version and (base is None or labels.get(images.BASE_LABEL) in (None, base.id))


def _get(engine, tag: str):
    import docker.errors

    try:
        return engine.images.get(tag)
    except docker.errors.ImageNotFound:
        return None


def _check_bounds(files: list[dict]) -> None:
    size = sum(int(f.get("size") or 0) for f in files)
    if len(files) > settings.AGENTS_MAX_FILES or size > settings.AGENTS_MAX_FOLDER_BYTES:
        raise AgentUnavailable(
            f"the agent's folder ({len(files)} files, {size} bytes) is over this runner's bounds "
            "(MEDALBOARD_AGENTS_MAX_FILES, MEDALBOARD_AGENTS_MAX_FOLDER_BYTES)"
        )


def _cut(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 20] + "\n[... cut]"


class Renewing:
    """Renews the task's lease every `every` seconds in the background while the block runs; what
    the renewal raised (revoked, fenced, a lost site) is raised when the block ends."""

    def __init__(self, every: float, renew) -> None:
        self.every, self.renew = every, renew
        self.error: Exception | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Renewing:
        self.thread.start()
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self.stop.set()
        self.thread.join()
        if kind is None and self.error is not None:
            raise self.error

    def _loop(self) -> None:
        while not self.stop.wait(self.every):
            try:
                self.renew()
            except Exception as exc:  # noqa: BLE001 - raised in the task's thread when the block ends
                self.error = exc
                return

"""What a run from a job needs to run again, recorded on the run as its sandbox starts.

    recipe = build(task, spec, backend, tick=lambda: leases.fence(held))

One JSON object (Run.recipe; docs/trust.md, Reproductions): the agent (name, version, image and the
image's id, what the image says it holds: its mlebench-env flavour, full or light, and the sha256s
of its pip freeze and dpkg list; the command as it ran), the model, the data (the competition and a hash of its public
folder), the seed, the settings, the hardware (GPUs by name, CPUs, memory), the time limit, the
network and how the sandbox ran (backend, OCI runtime, runner). A reproduction reads the job it
re-submits from the job; the recipe is what says, afterwards, whether both ran the same thing.

The data version is a sha256 of every file's relative path and content in the public folder,
computed once per state of the folder and kept in PublicDataVersion: later tasks only list the
folder (names, sizes, modification times) to find the cached hash. Links are never followed (a
link counts as its target's text) and only regular files are read. Reading a large folder takes
a while, so `tick` (the task's lease renewal) is called about once a second meanwhile; a folder
that cannot be read gives a recipe that says why, never a failed run.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.db import IntegrityError, transaction

from runner.backends import Backend, SandboxSpec
from runner.models import JobTask, PublicDataVersion

RECIPE_VERSION = 1
GPU_FIELDS = ("name", "memory_mb", "uuid", "driver")  # of each GPU a sandbox was given, from Runner.gpus
CHUNK = 1 << 20
TICK_S = 1.0
Tick = Callable[[], None]


@dataclass(frozen=True)
class Entry:
    path: str  # relative, with "/"
    kind: str  # "file" or "link"
    size: int
    mtime_ns: int
    target: str = ""


def build(task: JobTask, spec: SandboxSpec, backend: Backend, tick: Tick | None = None) -> dict:
    """The recipe of the task's attempt, as `spec` starts on `backend`."""
    return _assemble(task, _describe(backend, spec), spec.image, spec.data_dir, spec.gpus, tick)


def from_remote(task: JobTask, image: str, reported: dict) -> dict:
    """The recipe of a remote runner's attempt, from what the site knows
    (the job, its public data as the runner verified it by hash, the GPUs it gave) and the runner's word
    on how its sandbox ran (its backend's description), kept to a few short strings: a runner's report."""
    sandbox = reported.get("sandbox") if isinstance(reported, dict) else None
    described: dict = {"attached": "api"}
    for key, value in (sandbox if isinstance(sandbox, dict) else {}).items():
        if key in REMOTE_SANDBOX_FIELDS and isinstance(value, str):
            described[key] = value[:200]
        elif key == "image_environment" and isinstance(value, dict):
            described[key] = {str(k)[:50]: str(v)[:200] for k, v in list(value.items())[:20]}
    ran = (sandbox or {}).get("image") if isinstance(sandbox, dict) else None  # a package built on the runner
    image = ran[:200] if isinstance(ran, str) and ran else image
    data_dir = Path(task.competition.public_data_dir or "/nonexistent")
    return _assemble(task, described, image, data_dir, tuple(task.gpu_indices or ()), None)


REMOTE_SANDBOX_FIELDS = ("backend", "runtime", "image_id", "runner", "error")


def _assemble(task: JobTask, described: dict, image: str, data_dir: Path, gpus, tick: Tick | None) -> dict:
    job = task.job
    try:
        data = data_version(data_dir, tick)
    except OSError as exc:  # a record, never a reason to stop the run
        data = {"error": f"{exc.__class__.__name__}: {exc}"[:200]}
    agent = {"name": job.agent.name, "version": agent_version(job), "image": image,
             "image_id": described.pop("image_id", ""), "command": list(job.agent.command)}
    if environment := described.pop("image_environment", None):  # e.g. {"flavour": "light", ...}
        agent["environment"] = environment
    return {
        "version": RECIPE_VERSION,
        "agent": agent,
        "model": job.model_name,
        "data": {"competition": task.competition.slug, **data},
        "seed": task.seed, "settings": job.settings,
        "hardware": _hardware(task, gpus),
        "time_limit_s": job.time_limit_s, "network": job.network,
        "sandbox": {key: value for key, value in described.items() if key != "image"},
    }


def agent_version(job) -> str:
    """A packaged agent's folder hash as the job took it; for an agent defined on the site, a hash
    of what defines it (command, image), so a changed definition shows as a new version."""
    if job.agent_version:
        return job.agent_version
    definition = {"command": job.agent.command, "image": job.agent_image or job.agent.image}
    return "site-" + hashlib.sha256(json.dumps(definition, sort_keys=True).encode()).hexdigest()[:16]


def _describe(backend: Backend, spec: SandboxSpec) -> dict:
    try:
        return dict(backend.describe(spec))
    except Exception as exc:  # noqa: BLE001 - a record, never a reason to stop the run
        return {"backend": backend.name, "error": str(exc)[:200]}


def _hardware(task: JobTask, gpus) -> dict:
    """What the job asked for and what the sandbox got: each GPU it was given as the runner detected it
    (model, memory, UUID, driver), so two runs on different cards or drivers differ here."""
    job, runner = task.job, task.runner
    known = {gpu.get("index"): gpu for gpu in (runner.gpus if runner else [])}
    given = [{key: known.get(i, {}).get(key, "") for key in GPU_FIELDS} | {"index": i} for i in gpus]
    return {"gpus": job.gpus, "gpu_type": job.gpu_type, "gpu_names": [gpu["name"] for gpu in given],
            "gpu_devices": given, "gpu_driver": next((gpu["driver"] for gpu in given if gpu["driver"]), ""),
            "cpus": job.cpus, "memory_gb": job.memory_gb,
            "runner_cpus": runner.cpu_count if runner else None,
            "runner_memory_gb": runner.memory_gb if runner else None}


# --- the data version ---------------------------------------------------------------------------


def data_version(folder: Path, tick: Tick | None = None) -> dict:
    """{"version": sha256, "files", "bytes"} of the folder, from the cache when its listing is unchanged."""
    tick = _throttled(tick)
    entries = listing(folder, tick)
    signature = listing_signature(entries)
    cached = PublicDataVersion.objects.filter(path=str(folder), signature=signature).first()
    if cached is None:
        cached = _remember(folder, signature, entries, tick)
    return {"version": cached.digest, "files": cached.n_files, "bytes": cached.n_bytes}


def listing_signature(entries: list[Entry]) -> str:
    """A hash of the listing (names, sizes, times): unchanged while the folder is."""
    return hash_lines(f"{e.path}\0{e.kind}\0{e.size}\0{e.mtime_ns}\0{e.target}" for e in entries)


def listing(folder: Path, tick: Tick = lambda: None) -> list[Entry]:
    """Every regular file and link under `folder`, sorted by path; links are listed, not followed."""
    found: list[Entry] = []
    stack = [folder]
    while stack:
        tick()
        current = stack.pop()
        with os.scandir(current) as it:
            for item in it:
                relative = Path(item.path).relative_to(folder).as_posix()
                if item.is_symlink():
                    found.append(Entry(relative, "link", 0, 0, os.readlink(item.path)))
                elif item.is_dir(follow_symlinks=False):
                    stack.append(Path(item.path))
                elif item.is_file(follow_symlinks=False):
                    info = item.stat(follow_symlinks=False)
                    found.append(Entry(relative, "file", info.st_size, info.st_mtime_ns))
    return sorted(found, key=lambda e: e.path)


def content_digest(folder: Path, entries: list[Entry], tick: Tick = lambda: None,
                   hashes: dict[str, str] | None = None) -> str:
    """sha256 over each entry's path and the sha256 of its content (a link: of its target's text);
    `hashes`: the files' sha256s by path, already computed for this very listing."""
    known = hashes or {}

    def content(e: Entry) -> str:
        return (known.get(e.path) or file_hash(folder / e.path, tick)) if e.kind == "file" else e.target

    return hash_lines(f"{e.path}\0{e.kind}\0{content(e)}" for e in entries)


def remember(folder: Path, entries: list[Entry], hashes: dict[str, str]) -> None:
    """Keep the data version of the folder as `entries` list it, from its files' sha256s computed for
    that listing (runner.api_v1.data's manifest), so that no recipe reads the folder again."""
    signature = listing_signature(entries)
    if not PublicDataVersion.objects.filter(path=str(folder), signature=signature).exists():
        _remember(folder, signature, entries, lambda: None, hashes)


def _remember(folder: Path, signature: str, entries: list[Entry], tick: Tick,
              hashes: dict[str, str] | None = None) -> PublicDataVersion:
    row = PublicDataVersion(path=str(folder), signature=signature,
                            digest=content_digest(folder, entries, tick, hashes),
                            n_files=sum(e.kind == "file" for e in entries), n_bytes=sum(e.size for e in entries))
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:  # another task hashed the same folder at the same time
        return PublicDataVersion.objects.get(path=str(folder), signature=signature)
    return row


def file_hash(path: Path, tick: Tick = lambda: None) -> str:
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            digest.update(chunk)
            tick()
    return digest.hexdigest()


def _throttled(tick: Tick | None) -> Tick:
    """`tick` at most once per TICK_S, however often it is called."""
    if tick is None:
        return lambda: None
    last = [time.monotonic()]

    def throttled() -> None:
        if time.monotonic() - last[0] >= TICK_S:
            last[0] = time.monotonic()
            tick()

    return throttled


def hash_lines(lines) -> str:
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()

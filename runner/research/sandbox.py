"""A research run's sandbox on the runner that runs the agent (runner.remote.research), with nothing of
the site in it:

- `prepare(spec, backend, env_dir=..., problem=..., ...)`: the workspace (WORKSPACE_DIR, the agent's
  current folder; /home/workspace under Docker) copied from the task's env/, the research problem as
  the agent's instructions (RESEARCH_PROBLEM and DESCRIPTION_FILE name it, in a read-only folder of
  its own at DATA_DIR), the read-only files named on the spec (Docker mounts them read-only),
  TASK_KIND=research. The task's scripts/ are never part of the spec, nor on a remote runner at all.
- `in_environment(spec, backend, ...)`: the sandbox in MLAgentBench's environment.
- `Snapshots`: while the agent runs, a copy of its workspace (read-only files left out, as
  MLAgentBench's traces/step_<n>_files leave them out) each time it changed, at most every `every_s`
  and `most` in all, in the runner's own folder, all of them together within a quarter of the run's
  output limits (runner.host.output_budget).
- `zip_files`: one snapshot as the zip a run keeps (`workspace-snapshots/<seconds>.zip`), each file
  and name through the job's Redactor.
"""

from __future__ import annotations

import dataclasses
import shutil
import zipfile
from collections.abc import Iterable
from pathlib import Path

from runner.backends import Backend, SandboxSpec
from runner.host.output_budget import Budget
from runner.host.outputs import Limits
from runner.host.secrets import Redactor
from runner.research import environment, workspace

PROBLEM_FILE = "research_problem.txt"
SNAPSHOT_SHARE = 4  # the workspace snapshots' part of the run's output total: 1/4, the part their zips keep
MAX_NOTES = 50


def prepare(
    spec: SandboxSpec,
    backend: Backend,
    *,
    env_dir: Path,
    problem: str,
    description: str,
    read_only_files: Iterable[str],
) -> SandboxSpec:
    files = spec.workdir / "workspace"
    workspace.copy_env(env_dir, files)
    data = spec.workdir / "task"
    data.mkdir(parents=True, exist_ok=True)
    (data / PROBLEM_FILE).write_text(problem)
    (data / "description.md").write_text(description or problem)
    spec = dataclasses.replace(spec, data_dir=data, workspace_dir=files, read_only_files=tuple(read_only_files))
    paths = backend.paths(spec)
    return dataclasses.replace(
        spec, env={**spec.env, "TASK_KIND": "research", "RESEARCH_PROBLEM": f"{paths.data}/{PROBLEM_FILE}"}
    )


def in_environment(spec: SandboxSpec, backend: Backend, *, flavour: str | None, default_image: str) -> SandboxSpec:
    """A site-defined agent's sandbox in MLAgentBench's environment `flavour` (runner.research.environment),
    where MLAgentBench's own agents work and the starter's baseline was computed: its image under Docker
    (unless the agent names an image of its own, not `default_image`), its venv first on PATH on the
    local backend."""
    env = environment.for_backend(backend, flavour)
    if env.flavour == "none":
        return spec
    image = env.image if env.image and spec.image == default_image else spec.image
    return dataclasses.replace(spec, image=image, bin_dir=env.bin_dir)


class Snapshots:
    """The workspace's snapshots, all of them together within SNAPSHOT_SHARE of the run's output total
    and its file count, each file within workspace.SNAPSHOT_FILE_BYTES (a checkpoint is left out of
    them): a snapshot that does not fit whole is not kept, and none is taken after it. `every_s`,
    `most` and `limits` are the site's settings' unless given (a remote runner has them from its claim)."""

    def __init__(
        self, spec: SandboxSpec, *, every_s: float | None = None, most: int | None = None, limits: Limits | None = None
    ) -> None:
        if every_s is None or most is None or limits is None:
            from django.conf import settings

            every_s = settings.RESEARCH_SNAPSHOT_EVERY_S if every_s is None else every_s
            most = settings.RESEARCH_MAX_SNAPSHOTS if most is None else most
            limits = limits or Limits.from_settings()
        self.spec, self.every_s, self.most = spec, every_s, most
        self.read_only = set(spec.read_only_files)
        self.folder = spec.runner_dir / "research-snapshots"
        self.taken: list[tuple[float, Path]] = []
        self.last = workspace.fingerprint(spec.workspace_dir, self.read_only)  # the starter as given
        self.last_time = 0.0
        self.budget = Budget(
            min(workspace.SNAPSHOT_FILE_BYTES, limits.file_bytes), limits.total_bytes // SNAPSHOT_SHARE, limits.files
        )
        self.full = False
        self.notes: list[str] = []

    def tick(self, elapsed: float) -> None:
        full = self.full or len(self.taken) >= self.most
        if full or elapsed - self.last_time < self.every_s:
            return
        self.last_time = elapsed
        current = workspace.fingerprint(self.spec.workspace_dir, self.read_only)
        if current == self.last:
            return
        target = self.folder / f"{len(self.taken):03d}"
        before = (self.budget.total, self.budget.count)
        copied = workspace.copy_files(
            self.spec.workspace_dir, target, skip=self.read_only, budget=self.budget, what="the workspace's snapshots"
        )
        for note in copied.notes:
            self._note(note)
        if not copied.complete:
            shutil.rmtree(target, ignore_errors=True)
            self.budget.give_back(self.budget.total - before[0], self.budget.count - before[1])
            self.full = True
            self._note(
                f"no workspace snapshot kept from {elapsed:.1f} s on: the workspace no longer fits in "
                "the snapshots' share of the run's output limits"
            )
            return
        self.taken.append((round(elapsed, 1), target))
        self.last = current

    def _note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < MAX_NOTES:
            self.notes.append(text)


def zip_files(files: Path, archive: Path, redactor: Redactor) -> None:
    """The runner's own copy of a snapshot (regular files only, copied through sandbox_files)."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in files.rglob("*") if p.is_file() and not p.is_symlink()):
            with open(path, "rb") as src, zf.open(redactor.text(path.relative_to(files).as_posix()), "w") as out:
                for chunk in redactor.stream(iter(lambda: src.read(1 << 20), b"")):
                    out.write(chunk)

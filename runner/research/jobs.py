"""A job's task on a research task: the agent works in a writable copy of the task's env/, and its
workspace, not a submission file, is what the task's eval.py scores.

- `prepare(spec, competition, backend)`: the workspace (WORKSPACE_DIR, the agent's current folder;
  /home/workspace under Docker) copied from env/, the research problem as the agent's instructions
  (RESEARCH_PROBLEM and DESCRIPTION_FILE name it, in a read-only folder of its own at DATA_DIR), the
  read-only files named on the spec (Docker mounts them read-only), TASK_KIND=research. The task's
  scripts/ are never part of the spec.
- `Snapshots`: while the agent runs, a copy of its workspace (read-only files left out, as
  MLAgentBench's traces/step_<n>_files leave them out) each time it changed, at most every
  RESEARCH_SNAPSHOT_EVERY_S and RESEARCH_MAX_SNAPSHOTS in all, in the runner's own folder, all of
  them together within a quarter of the run's output limits (runner.output_budget).
- `finish(...)`: the read-only files checked unchanged, the final workspace and each snapshot scored
  in the grading sandbox (runner.research.grading), and the outcome recorded through
  leaderboard.runs.job_runs.record_research_result.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from leaderboard.models import Competition, ResearchTask, Run
from runner.backends import Backend, SandboxSpec
from runner.output_budget import Budget
from runner.outputs import Limits
from runner.research import environment, grading, workspace
from runner.secrets import Redactor

log = logging.getLogger(__name__)
PROBLEM_FILE = "research_problem.txt"
OUTPUT_TAIL_BYTES = 1 << 20  # of the agent's output, searched for MLAgentBench's failure classes
SNAPSHOT_SHARE = 4  # the workspace snapshots' part of the run's output total: 1/4, the part their zips keep
MAX_NOTES = 50


def is_research(competition: Competition) -> bool:
    return competition.kind == Competition.Kind.RESEARCH


def in_environment(spec: SandboxSpec, backend: Backend) -> SandboxSpec:
    """A site-defined agent's sandbox in MLAgentBench's environment (runner.research.environment), where
    MLAgentBench's own agents work and the starter's baseline was computed: its image under Docker
    (unless the agent names an image of its own), its venv first on PATH on the local backend. An agent
    packaged as MLE-bench packages it keeps its own image."""
    env = environment.for_backend(backend)
    if env.flavour == "none":
        return spec
    image = env.image if env.image and spec.image == settings.MEDALBOARD_AGENT_IMAGE else spec.image
    return dataclasses.replace(spec, image=image, bin_dir=env.bin_dir)


def prepare(spec: SandboxSpec, competition: Competition, backend: Backend) -> SandboxSpec:
    task = ResearchTask.objects.filter(competition=competition).first()
    if task is None:
        raise RuntimeError(f"{competition.slug} is a research competition without its task folder: import it with "
                           "`import_research_tasks`")
    files = spec.workdir / "workspace"
    workspace.copy_env(Path(competition.public_data_dir), files)
    data = spec.workdir / "task"
    data.mkdir(parents=True, exist_ok=True)
    (data / PROBLEM_FILE).write_text(task.research_problem)
    (data / "description.md").write_text(competition.description or task.research_problem)
    spec = dataclasses.replace(spec, data_dir=data, workspace_dir=files, read_only_files=tuple(task.read_only_files))
    paths = backend.paths(spec)
    return dataclasses.replace(spec, env={**spec.env, "TASK_KIND": "research",
                                          "RESEARCH_PROBLEM": f"{paths.data}/{PROBLEM_FILE}"})


class Snapshots:
    """The workspace's snapshots, all of them together within SNAPSHOT_SHARE of the run's output total
    and its file count, each file within workspace.SNAPSHOT_FILE_BYTES (a checkpoint is left out of
    them): a snapshot that does not fit whole is not kept, and none is taken after it."""

    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec
        self.read_only = set(spec.read_only_files)
        self.folder = spec.runner_dir / "research-snapshots"
        self.taken: list[tuple[float, Path]] = []
        self.last = workspace.fingerprint(spec.workspace_dir, self.read_only)  # the starter as given
        self.last_time = 0.0
        limits = Limits.from_settings()
        self.budget = Budget(min(workspace.SNAPSHOT_FILE_BYTES, limits.file_bytes),
                             limits.total_bytes // SNAPSHOT_SHARE, limits.files)
        self.full = False
        self.notes: list[str] = []

    def tick(self, elapsed: float) -> None:
        full = self.full or len(self.taken) >= settings.RESEARCH_MAX_SNAPSHOTS
        if full or elapsed - self.last_time < settings.RESEARCH_SNAPSHOT_EVERY_S:
            return
        self.last_time = elapsed
        current = workspace.fingerprint(self.spec.workspace_dir, self.read_only)
        if current == self.last:
            return
        target = self.folder / f"{len(self.taken):03d}"
        before = (self.budget.total, self.budget.count)
        copied = workspace.copy_files(self.spec.workspace_dir, target, skip=self.read_only, budget=self.budget,
                                      what="the workspace's snapshots")
        for note in copied.notes:
            self._note(note)
        if not copied.complete:
            shutil.rmtree(target, ignore_errors=True)
            self.budget.give_back(self.budget.total - before[0], self.budget.count - before[1])
            self.full = True
            self._note(f"no workspace snapshot kept from {elapsed:.1f} s on: the workspace no longer fits in "
                       "the snapshots' share of the run's output limits")
            return
        self.taken.append((round(elapsed, 1), target))
        self.last = current

    def _note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < MAX_NOTES:
            self.notes.append(text)


def finish(run: Run, spec: SandboxSpec, *, backend: Backend, snapshots: Snapshots | None, status: str,
           exit_code: int | None, elapsed_s: float | None, fence: Callable[[], None], redactor: Redactor) -> None:
    """Check, score and record the run's workspace (and its snapshots). What the eval says goes
    through the job's Redactor: it quotes the agent's files, which may hold a secret's value."""
    from leaderboard.runs.job_runs import ResearchEvidence, record_research_result

    task = ResearchTask.objects.select_related("competition").get(competition_id=run.competition_id)
    changes = workspace.read_only_changes(spec.workspace_dir, task.read_only_files)
    work = spec.runner_dir / "grading"
    try:
        final = _score(task, spec.workspace_dir, backend, work, f"run-{run.pk}-final", fence)
        points = [(seconds, _score(task, folder, backend, work, f"run-{run.pk}-{i}", fence))
                  for i, (seconds, folder) in enumerate(snapshots.taken if snapshots else [])]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    kept = _keep_snapshots(run, snapshots.taken if snapshots else [], spec.runner_dir, redactor)
    record_research_result(run, ResearchEvidence(
        score=final.score, error=redactor.text(final.error), read_only_changes=[redactor.text(c) for c in changes],
        snapshots=[(seconds, point.score, redactor.text(point.error)) for seconds, point in points],
        final_seconds=elapsed_s, output=_output(spec), job_status=status, exit_code=exit_code,
        has_submission=(spec.workspace_dir / "submission.csv").is_file(), snapshot_artifacts=kept,
        notes=[redactor.text(note) for note in final.notes],
    ))


def _keep_snapshots(run: Run, taken: list[tuple[float, Path]], folder: Path, redactor: Redactor) -> dict[float, int]:
    """Each snapshot's files as a zip artifact `workspace-snapshots/<seconds>.zip` (MLAgentBench's
    step_<n>_files), every file redacted, within the run's output limits; seconds -> artifact id."""
    from django.core.files import File

    from leaderboard.models import Artifact
    from leaderboard.runs.job_runs import store_file

    kept, total = {}, 0
    for seconds, files in taken:
        archive = folder / f"snapshot-{seconds:g}.zip"
        _zip(files, archive, redactor)
        size = archive.stat().st_size
        if size > settings.JOB_OUTPUT_FILE_BYTES or total + size > settings.JOB_OUTPUT_TOTAL_BYTES // SNAPSHOT_SHARE:
            continue  # its score is still recorded; the files are too many to keep
        with open(archive, "rb") as f:
            kept[seconds] = store_file(run, Artifact.Kind.OTHER, f"workspace-snapshots/{seconds:g}.zip",
                                       File(f, name=archive.name)).pk
        total += size
    return kept


def _zip(files: Path, archive: Path, redactor: Redactor) -> None:
    """The runner's own copy of a snapshot (regular files only, copied through sandbox_files)."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in files.rglob("*") if p.is_file() and not p.is_symlink()):
            with open(path, "rb") as src, zf.open(redactor.text(path.relative_to(files).as_posix()), "w") as out:
                for chunk in redactor.stream(iter(lambda: src.read(1 << 20), b"")):
                    out.write(chunk)


def _score(task: ResearchTask, files: Path, backend: Backend, work: Path, label: str, fence) -> grading.Score:
    try:
        return grading.score_workspace(task.competition, files, backend=backend, work=work, label=label,
                                       read_only=set(task.read_only_files), fence=fence)
    except grading.NotGradable as exc:
        return grading.Score(None, str(exc))
    except Exception as exc:  # noqa: BLE001 - the grading sandbox could not run: the run says why
        log.exception("grading %s failed", label)
        return grading.Score(None, f"the grading sandbox failed: {exc.__class__.__name__}: {exc}")


def _output(spec: SandboxSpec) -> str:
    """The end of the agent's output (the runner's own copy), for the failure classes."""
    from runner.backends.base import file_tail

    return file_tail(spec.host_output_log, OUTPUT_TAIL_BYTES)

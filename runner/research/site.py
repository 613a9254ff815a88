"""A job's task on a research task: the agent works in a writable copy of the task's env/, and its
workspace, not a submission file, is what the task's eval.py scores.

- `prepare(spec, competition, backend)`, `in_environment(spec, backend)`, `Snapshots`: the agent's
  sandbox, made by runner.research.sandbox (which a remote runner shares, holding no database): the
  workspace copied from env/, the research problem as the agent's instructions, the read-only files,
  MLAgentBench's environment, and the workspace's snapshots while the agent runs. The task's
  scripts/ are never part of the spec.
- `finish(...)`: the read-only files checked unchanged, the final workspace and each snapshot scored
  in the grading sandbox (runner.research.grading), and the outcome recorded through
  leaderboard.runs.job_runs.record_research_result.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from django.conf import settings

from leaderboard.models import Competition, ResearchTask, Run
from runner.backends import Backend, SandboxSpec
from runner.host.secrets import Redactor
from runner.research import grading, sandbox, workspace
from runner.research.sandbox import SNAPSHOT_SHARE, Snapshots, zip_files

log = logging.getLogger(__name__)
OUTPUT_TAIL_BYTES = 1 << 20  # of the agent's output, searched for MLAgentBench's failure classes


def is_research(competition: Competition) -> bool:
    return competition.kind == Competition.Kind.RESEARCH


def in_environment(spec: SandboxSpec, backend: Backend) -> SandboxSpec:
    """A site-defined agent's sandbox in MLAgentBench's environment (runner.research.sandbox.in_environment).
    An agent packaged as MLE-bench packages it keeps its own image."""
    return sandbox.in_environment(spec, backend, flavour=settings.RESEARCH_ENVIRONMENT,
                                  default_image=settings.MEDALBOARD_AGENT_IMAGE)


def prepare(spec: SandboxSpec, competition: Competition, backend: Backend) -> SandboxSpec:
    task = ResearchTask.objects.filter(competition=competition).first()
    if task is None:
        raise RuntimeError(f"{competition.slug} is a research competition without its task folder: import it with "
                           "`import_research_tasks`")
    return sandbox.prepare(spec, backend, env_dir=Path(competition.public_data_dir), problem=task.research_problem,
                           description=competition.description, read_only_files=task.read_only_files)


def finish(run: Run, spec: SandboxSpec, *, backend: Backend, snapshots: Snapshots | None, status: str,
           exit_code: int | None, elapsed_s: float | None, fence: Callable[[], None], redactor: Redactor) -> None:
    """Check, score and record the run's workspace (and its snapshots). What the eval says goes
    through the job's Redactor: it quotes the agent's files, which may hold a secret's value."""
    from leaderboard.runs.job_runs import ResearchEvidence, record_research_result

    task = ResearchTask.objects.select_related("competition").get(competition_id=run.competition_id)
    changes = workspace.read_only_changes(spec.workspace_dir, task.read_only_files)
    work = spec.runner_dir / "grading"
    try:
        final = score_files(task, spec.workspace_dir, backend, work, f"run-{run.pk}-final", fence)
        points = [(seconds, score_files(task, folder, backend, work, f"run-{run.pk}-{i}", fence))
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
        zip_files(files, archive, redactor)
        size = archive.stat().st_size
        if size > settings.JOB_OUTPUT_FILE_BYTES or total + size > settings.JOB_OUTPUT_TOTAL_BYTES // SNAPSHOT_SHARE:
            continue  # its score is still recorded; the files are too many to keep
        with open(archive, "rb") as f:
            kept[seconds] = store_file(run, Artifact.Kind.OTHER, f"workspace-snapshots/{seconds:g}.zip",
                                       File(f, name=archive.name)).pk
        total += size
    return kept


def score_files(task: ResearchTask, files: Path, backend: Backend, work: Path, label: str, fence,
                left_out: Sequence[str] = ()) -> grading.Score:
    try:
        return grading.score_workspace(task.competition, files, backend=backend, work=work, label=label,
                                       read_only=set(task.read_only_files), fence=fence, left_out=left_out)
    except grading.NotGradable as exc:
        return grading.Score(None, str(exc))
    except Exception as exc:  # noqa: BLE001 - the grading sandbox could not run: the run says why
        log.exception("grading %s failed", label)
        return grading.Score(None, f"the grading sandbox failed: {exc.__class__.__name__}: {exc}")


def _output(spec: SandboxSpec) -> str:
    """The end of the agent's output (the runner's own copy), for the failure classes."""
    from runner.backends.base import file_tail

    return file_tail(spec.host_output_log, OUTPUT_TAIL_BYTES)

"""MLAgentBench's own log folders on a research task, scored by the task's eval.py as a job's workspaces are.

    keep_workspaces(run, parsed.workspaces, written)    # at import: the trace's step files as artifacts
    score_on_a_runner(run)                              # the run waits (pending) for a runner to score them

At import, each `env_log/traces/step_<n>_files` becomes the artifact `workspace-snapshots/<seconds>.zip`
(the step's time into the run, as a job's snapshots are named) and `step_final_files` the files
`workspace/<path>` (as a job keeps its final workspace): regular files only, a link or odd file never
followed nor stored, within the job output limits (the step zips within SNAPSHOT_SHARE of the total),
every file left out said in a note on the run.

A run on a research task with such files waits, pending, for a runner: the Celery task webapp.queue.SCORE_TRACE,
asked for by name on the research queue (the site never runs a task's code). The runner claims it as
a grading (leaderboard.tasks.GRADINGS: lease, heartbeat, fence), unpacks the files (`unpack_workspaces`),
scores each in the grading sandbox and stores the outcome (`record_trace_scores`): the final score, a
Snapshot per step at its time with its zip, so the best-step statistics read it, and verification
"verified" in the one sense that the score was computed here: the files scored are the uploader's.
"""

from __future__ import annotations

import os
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from leaderboard.lib import archives
from leaderboard.lib.research_failures import ERROR
from leaderboard.models import Artifact, Competition, Run
from leaderboard.runs.artifacts import Upload, UploadError, Written, check_name, store_upload
from leaderboard.runs.research import ResearchEvidence, classify_imported, store_snapshots
from webapp import leases, queue

FINAL_FOLDER = "workspace"
STEPS_FOLDER = "workspace-snapshots"
SNAPSHOT_SHARE = 4  # as a job's snapshots: a quarter of the run's output total
FILES_SCORED = "the trace's own files as uploaded; only the score was computed here, by the task's eval.py"
MAX_NOTES = 50
REMOTE_JOB_REPORT = "remote_research"  # a remote runner's report on a research job run, until it is scored


@dataclass
class _Budget:
    file_bytes: int
    total_bytes: int
    files: int
    used_bytes: int = 0
    used_files: int = 0
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if len(self.notes) < MAX_NOTES:
            self.notes.append(text)


def _budget(share: int = 1) -> _Budget:
    return _Budget(min(settings.JOB_OUTPUT_FILE_BYTES, settings.MAX_UPLOAD_BYTES),
                   settings.JOB_OUTPUT_TOTAL_BYTES // share, settings.JOB_OUTPUT_MAX_FILES)


# --- at import ---------------------------------------------------------------------------------


def keep_workspaces(run: Run, folders, written: Written) -> None:
    """The workspace folders a trajectory's folder kept (importers' WorkspaceFolder), as artifacts."""
    if not folders:
        return
    final, steps = _budget(), _budget(SNAPSHOT_SHARE)
    for folder in [f for f in folders if f.step is None]:
        _keep_final(run, folder.path, final, written)
    timed: dict[float, object] = {}
    for folder in [f for f in folders if f.step is not None]:
        if folder.seconds is None or folder.seconds < 0:
            steps.note(f"{folder.path.name}: trace.json has no time for step {folder.step}; its files were not kept")
            continue
        timed[round(folder.seconds, 1)] = folder  # a later step at the same time is the one kept
    for seconds, folder in sorted(timed.items()):
        _keep_step(run, seconds, folder.path, steps, written)
    if final.notes or steps.notes:
        run.import_warnings = [*run.import_warnings, *final.notes, *steps.notes]
        run.save(update_fields=["import_warnings"])


def regular_files(root: Path, budget: _Budget, label: str) -> list[tuple[str, Path, int]]:
    """(relative name, path, size) of the regular files under root, links and odd files skipped with a
    note (never followed), in name order."""
    found, pending = [], [root]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            budget.note(f"{label}: a folder could not be read ({exc.strerror}); its files were not kept")
            continue
        for entry in entries:
            rel = Path(entry.path).relative_to(root).as_posix()
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                pending.append(Path(entry.path))
            elif stat.S_ISREG(info.st_mode):
                found.append((rel, Path(entry.path), info.st_size))
            else:
                budget.note(f"{label}/{rel}: not a regular file (a link or special file); not followed, not kept")
    return sorted(found)


def _open_regular(path: Path):
    return os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb")


def _fits(budget: _Budget, label: str, size: int) -> bool:
    if size > budget.file_bytes:
        budget.note(f"{label}: {size:,} bytes, over the {budget.file_bytes:,}-byte limit of a file; not kept")
        return False
    if budget.used_files >= budget.files or budget.used_bytes + size > budget.total_bytes:
        budget.note(f"{label}: not kept, the run's files reached their limits "
                    f"({budget.files:,} files, {budget.total_bytes:,} bytes)")
        return False
    return True


def _keep_final(run: Run, root: Path, budget: _Budget, written: Written) -> None:
    for rel, path, size in regular_files(root, budget, "step_final_files"):
        if not _fits(budget, f"step_final_files/{rel}", size):
            continue
        try:
            check_name(f"{FINAL_FOLDER}/{rel}")
            with _open_regular(path) as f:
                store_upload(run, Upload(Artifact.Kind.CODE, f"{FINAL_FOLDER}/{rel}", File(f, name=path.name)),
                             written)
        except (OSError, UploadError) as exc:
            budget.note(f"step_final_files/{rel}: not kept ({exc})")
            continue
        budget.used_bytes += size
        budget.used_files += 1


def _keep_step(run: Run, seconds: float, root: Path, budget: _Budget, written: Written) -> None:
    """The step's files as one zip; a step that does not fit whole is not kept (its time is still known)."""
    label = root.name
    with tempfile.TemporaryDirectory(prefix="medalboard-step-") as scratch:
        archive = Path(scratch) / "step.zip"
        count = 0
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            for rel, path, size in regular_files(root, budget, label):
                if size > budget.file_bytes:
                    budget.note(f"{label}/{rel}: {size:,} bytes, over the limit of a file; left out of the step")
                    continue
                try:
                    check_name(rel)
                except UploadError as exc:
                    budget.note(f"{label}: a file left out of the step ({exc})")
                    continue
                try:
                    src = _open_regular(path)
                except OSError as exc:
                    budget.note(f"{label}/{rel}: could not be read ({exc.strerror}); left out of the step")
                    continue
                with src, zf.open(rel, "w") as out:
                    while chunk := src.read(1 << 20):
                        out.write(chunk)
                count += 1
        size = archive.stat().st_size
        if budget.used_files + count > budget.files or not _fits(budget, label, size):
            return
        with archive.open("rb") as f:
            store_upload(run, Upload(Artifact.Kind.OTHER, f"{STEPS_FOLDER}/{seconds_name(seconds)}.zip",
                                     File(f, name=f"step-{seconds_name(seconds)}.zip")), written)
        budget.used_bytes += size
        budget.used_files += count


# --- waiting for a runner ----------------------------------------------------------------------


def _workspace_artifacts(run: Run):
    return run.artifacts.filter(Q(name__startswith=f"{FINAL_FOLDER}/") | Q(name__startswith=f"{STEPS_FOLDER}/"))


def is_remote_job_to_score(run: Run) -> bool:
    """A job's run on a research task that a remote runner finished: its report waits in the grading
    report (REMOTE_JOB_REPORT, runner.api_v1.research) until the task's eval.py scores it, on a runner
    as a trace is."""
    report = run.grading_report
    return (run.origin == Run.Origin.JOB and run.competition is not None
            and run.competition.kind == Competition.Kind.RESEARCH
            and isinstance(report, dict) and REMOTE_JOB_REPORT in report)


def is_trace_to_score(run: Run) -> bool:
    """An imported or uploaded run on a research task that brought its workspace files."""
    competition = run.competition
    return (competition is not None and competition.kind == Competition.Kind.RESEARCH
            and run.origin != Run.Origin.JOB and _workspace_artifacts(run).exists())


def score_on_a_runner(run: Run) -> None:
    """Make the run wait for a runner's eval.py (its enqueueing follows the commit: submit_run's)."""
    if not is_trace_to_score(run):
        return
    reported = run.score
    run.status = Run.Status.PENDING
    run.grading_report = {"note": "waiting for a runner to score the trace's files with the task's eval.py",
                          **({"reported_score": reported} if reported is not None else {})}
    run.save(update_fields=["status", "grading_report"])


def ask_a_runner(run_id: int) -> bool:
    """Publish SCORE_TRACE for the run on the research queue; False if the broker was down (the sweep
    sends it again: leaderboard.runs.recovery)."""
    sent = queue.publish(queue.SCORE_TRACE, [run_id], what=f"the scoring of research trace run {run_id}",
                   queue=settings.RESEARCH_BASELINE_QUEUE)
    if sent is not None:
        Run.objects.filter(pk=run_id, grading_enqueued_at__isnull=True).update(grading_enqueued_at=timezone.now())
    return sent is not None


def link_and_score(runs: list[Run]) -> None:
    """Runs imported before their task: those with workspace files wait for a runner's eval.py."""
    for run in runs:
        run.refresh_from_db()
        if run.status == Run.Status.GRADED and run.verification != Run.Verification.VERIFIED \
                and is_trace_to_score(run):
            score_on_a_runner(run)
            transaction.on_commit(lambda pk=run.pk: ask_a_runner(pk))


def link_imported_runs(competition) -> int:
    """Runs imported before their research task was, named by its id: now on the task (their score
    counts against its baseline), with their failure classes. Returns how many."""
    runs = list(Run.objects.filter(competition__isnull=True, task_name=competition.slug))
    if runs:
        Run.objects.filter(pk__in=[r.pk for r in runs]).update(competition=competition)
        for run in runs:
            classify_imported(run)
        link_and_score(runs)  # a trace with its step files waits for a runner's eval.py
    return len(runs)


# --- on the runner -----------------------------------------------------------------------------


@dataclass
class Workspaces:
    final: Path | None  # the final files' folder, None where the trace had no step_final_files
    steps: list[tuple[float, Path, int]]  # (seconds, folder, the zip's artifact id), in time order
    notes: list[str] = field(default_factory=list)


def unpack_workspaces(run: Run, target: Path) -> Workspaces:
    """The run's stored workspaces as folders under `target` (each zip under the archive limits)."""
    from leaderboard.runs.artifacts import artifact_path

    finals = list(run.artifacts.filter(kind=Artifact.Kind.CODE, name__startswith=f"{FINAL_FOLDER}/"))
    found = Workspaces(target / "final" if finals else None, [])
    for artifact in finals:
        rel = Path(artifact.name[len(FINAL_FOLDER) + 1:])
        if rel.is_absolute() or ".." in rel.parts:
            continue
        dest = target / "final" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        with artifact.file.open("rb") as src, dest.open("wb") as out:
            while chunk := src.read(1 << 20):
                out.write(chunk)
    zips = run.artifacts.filter(kind=Artifact.Kind.OTHER, name__startswith=f"{STEPS_FOLDER}/", name__endswith=".zip")
    for number, artifact in enumerate(sorted(zips, key=lambda a: step_seconds(a.name) or 0)):
        seconds = step_seconds(artifact.name)
        if seconds is None:
            continue
        folder = target / f"step-{number:04d}"
        try:
            with archives.open_archive(artifact_path(artifact, target)) as unpacked:
                unpacked.extract_to(folder)
        except archives.ArchiveError as exc:
            found.notes.append(f"{artifact.name}: not scored ({exc})")
            continue
        found.steps.append((seconds, folder, artifact.pk))
    return found


def seconds_name(seconds: float) -> str:
    """12.5 -> "12.5", 30.0 -> "30", as a job's snapshots are named, never in exponent form (1.2e+06)."""
    return f"{seconds:.1f}".removesuffix(".0")


def step_seconds(name: str) -> float | None:
    """The time of a step's zip from its name (`workspace-snapshots/<seconds>.zip`)."""
    stem = name.removeprefix(f"{STEPS_FOLDER}/").removesuffix(".zip")
    try:
        seconds = float(stem)
    except ValueError:
        return None
    return seconds if seconds >= 0 and seconds == seconds else None


def record_trace_scores(run: Run, lease, *, score: float | None, error: str,
                        points: list[tuple[float, float | None, str]], artifacts: dict[float, int],
                        notes: list[str]) -> bool:
    """The scores the runner's grading sandbox gave the trace's files, stored as the holder's last write
    of its grading claim (False, nothing stored, if the claim moved on); the failure classes stay as the
    import read them."""
    run.refresh_from_db()
    reported = (run.grading_report or {}).get("reported_score")
    report = {"research": {"eval": "scripts/eval.py get_score", "files": FILES_SCORED, "snapshots": len(points),
                           **({"reported_score": reported} if reported is not None else {})}}
    has_final = run.artifacts.filter(kind=Artifact.Kind.CODE, name__startswith=f"{FINAL_FOLDER}/").exists()
    with transaction.atomic():
        if not leases.end(
                lease, Run.Status.GRADED, score=score, submission_exists=has_final,
                valid_submission=score is not None and ERROR not in (run.failure_classes or []),
                grading_error=error[:5000], grading_report=report, verification=Run.Verification.VERIFIED,
                competition_version=run.competition.version if run.competition else run.competition_version,
                import_warnings=[*run.import_warnings, *notes], finished_at=run.finished_at or timezone.now()):
            return False
        store_snapshots(run, ResearchEvidence(score=score, snapshots=points, final_seconds=run.duration_s,
                                              snapshot_artifacts=artifacts))
    return True

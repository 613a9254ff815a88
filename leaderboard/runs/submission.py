"""Workflows that touch several models. Every way a run comes in (the upload form, the REST API,
`manage.py import_run`, the demo seeder) goes through `submit_run`, so validation, idempotency,
storage and grading behave the same whichever door was used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from django.core.files import File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction

from leaderboard.models import Artifact, Competition, Run, Team
from leaderboard.runs import quotas, research, research_traces, snapshots
from leaderboard.runs.artifacts import (
    STORAGE_ERRNOS,
    StorageUnavailable,
    Upload,
    UploadError,
    Written,
    collect_uploads,
    expand_archive,
    is_archive,
    local_copy,
    single_root,
    store_artifact,
)
from leaderboard.runs.experiments import ExperimentSpec, get_or_create_experiment
from leaderboard.runs.outcome import set_outcome
from webapp import queue

log = logging.getLogger(__name__)


def submit_run(
    *,
    owner,
    competition: str,
    experiment: ExperimentSpec,
    seed: int = 0,
    submission: File | None = None,
    trajectory_files: Sequence[File] = (),
    snapshot_files: Sequence[File] = (),
    extra_files: Sequence[Upload] = (),
    run_folder: Path | None = None,
    parsed_trajectory=None,
    notes: str = "",
    is_private: bool = False,
    origin: str = Run.Origin.UPLOAD,
    verification: str | None = None,
    self_reported_score: float | None = None,
    reported: dict[str, Any] | None = None,
    team: Team | None = None,
    fence: Callable[[], None] | None = None,
) -> Run:
    """Validate, store and register one run; grading is enqueued once the transaction commits.

    The run joins the experiment of its owner: `team` when given (the uploader must be a member),
    else the uploading user (None: catalogue, demo and published data).
    The same upload twice (same owner, files and key fields) returns the run created the first
    time, even when both arrive at once (a unique constraint decides), updated with the repeat's
    privacy and notes (see `_repeat`). On any failure nothing is left behind: rows roll back and
    stored files are deleted.
    `submission` may also be a .zip/.tar(.gz) of a run folder (submission/, logs/, code/);
    `run_folder` is such a folder on disk (the CLI). `parsed_trajectory` is one already read.
    `snapshot_files` are submission snapshots named `<elapsed-seconds>.csv` (leaderboard.runs.snapshots).
    `fence`, if given, runs last in the transaction that stores the run (it raises if the importing
    worker lost its claim: then nothing is kept).
    `experiment`: what the uploader states about the experiment (`ExperimentSpec.split` makes one of a
    form's, the API's or the CLI's fields; what they leave out stays "not disclosed").
    """
    competition = competition.strip()
    if not experiment.agent_name or not experiment.model_name:
        raise UploadError("an agent name and a model name are required")
    if not competition and parsed_trajectory is None and not trajectory_files and run_folder is None:
        raise UploadError("say which competition (or task) the run is for")
    if team is not None and not team.members.filter(pk=getattr(owner, "pk", None)).exists():
        raise UploadError(f"only members of the team {team.name!r} can upload its runs")
    with tempfile.TemporaryDirectory(prefix="medalboard-upload-") as scratch:
        snapshot_uploads = [Upload(Artifact.Kind.SNAPSHOT, snapshots.name_for(seconds), f) for seconds, f in
                            zip(_snapshot_times([f.name or "" for f in snapshot_files]), snapshot_files, strict=True)]
        uploads, run_folder = collect_uploads(
            submission, trajectory_files, [*snapshot_uploads, *extra_files], run_folder, Path(scratch)
        )
        _snapshot_times([u.name for u in uploads if u.kind == Artifact.Kind.SNAPSHOT])
        key = {
            "owner": getattr(owner, "pk", None), "competition": competition, **experiment.identity(),
            "seed": seed, "score": self_reported_score, "team": getattr(team, "pk", None),
            "sample": getattr(getattr(parsed_trajectory, "meta", None), "sample_id", None),
        }
        content_hash = compute_content_hash(key, uploads)
        existing = Run.objects.filter(content_hash=content_hash).first()
        if existing is not None:
            return _repeat(existing, is_private=is_private, notes=notes)
        if origin == Run.Origin.UPLOAD and any(u.kind == Artifact.Kind.SUBMISSION for u in uploads):
            _refuse_research_submission(competition)
            quotas.check_quota(user=owner, competition=Competition.objects.filter(slug=competition).first())
        written = Written()
        try:
            with transaction.atomic():
                run = _create_run(
                    experiment=get_or_create_experiment(experiment, owner=team or owner),
                    competition=Competition.objects.filter(slug=competition).first(),
                    task_name=competition, seed=seed, owner=owner, is_private=is_private, origin=origin,
                    verification=verification or Run.Verification.SELF_REPORTED, notes=notes,
                    content_hash=content_hash,
                )
                for upload in uploads:
                    snapshots.register_if_snapshot(run, store_artifact(run, upload, written))
                _import_trajectory(run, uploads, parsed_trajectory, run_folder, Path(scratch), written)
                if not run.task_name:
                    raise UploadError("say which competition (or task) the run is for: the trajectory does not")
                set_outcome(run, uploads, self_reported_score, reported)
                if run.competition is not None and run.competition.kind == Competition.Kind.RESEARCH:
                    research.classify_imported(run)
                    research_traces.score_on_a_runner(run)
                if run.status == Run.Status.PENDING:
                    transaction.on_commit(lambda: enqueue_grading(run))
                if fence is not None:
                    fence()
        except _SameUploadAtOnce:
            written.delete_all()
            return _repeat(Run.objects.get(content_hash=content_hash), is_private=is_private, notes=notes)
        except OSError as exc:
            written.delete_all()
            if exc.errno not in STORAGE_ERRNOS:
                raise
            log.error("artifact storage refused a write (%s); upload by %s refused with a 503", exc, owner)
            raise StorageUnavailable("the artifact storage cannot be written to right now; "
                                     "nothing was saved, please try again later") from exc
        except Exception:
            written.delete_all()
            raise
    return run


def _refuse_research_submission(slug: str) -> None:
    """A research task is scored by its own eval in a grading sandbox, on a runner: an uploaded file has
    no grader here, and a run saved for it would only fail later."""
    if Competition.objects.filter(slug=slug, kind=Competition.Kind.RESEARCH).exists():
        raise UploadError(f"{slug} is a research task: it is scored by running the task's own eval on a runner "
                          "(submit a job), not from an uploaded submission; upload its trajectory without "
                          "a submission to import a run made elsewhere")


def _snapshot_times(names: list[str]) -> list[float]:
    try:
        return snapshots.check_times(names)
    except snapshots.SnapshotError as exc:
        raise UploadError(str(exc)) from None


class _SameUploadAtOnce(Exception):
    """An identical upload committed first, while this one was being stored."""


def _create_run(**fields) -> Run:
    try:
        with transaction.atomic():  # a savepoint: the transaction goes on after a refused insert
            return Run.objects.create(**fields)
    except IntegrityError:
        if Run.objects.filter(content_hash=fields["content_hash"]).exists():
            raise _SameUploadAtOnce from None
        raise


def _repeat(run: Run, *, is_private: bool, notes: str) -> Run:
    """The run an identical earlier upload created, with what the repeat asks for: it can make the
    run private and replace its notes. It never makes a private run public (a form or client that
    leaves the box unticked is not asking for that): `repeat_note` says so instead."""
    fields, run.repeat_note = [], f"identical to run {run.pk}, uploaded earlier"
    if is_private and not run.is_private:
        run.is_private = True
        fields.append("is_private")
        run.repeat_note += "; it is now private"
    elif run.is_private and not is_private:
        run.repeat_note += "; it stays private (make it public on its edit page)"
    if notes and notes != run.notes:
        run.notes = notes
        fields.append("notes")
    if fields:
        run.save(update_fields=[*fields, "updated_at"])
    return run


def enqueue_grading(run: Run) -> None:
    """A run's grading: a research trace's by a runner (the task's eval.py), anything else here."""
    if research_traces.is_trace_to_score(run):
        research_traces.ask_a_runner(run.pk)
    else:
        _enqueue_grading(run.pk)


def _enqueue_grading(run_id: int) -> None:
    if queue.publish(queue.GRADE_RUN, [run_id], what=f"grading of run {run_id}") is None:
        return  # the run stays pending; the sweep (leaderboard.runs.recovery) enqueues it again
    from django.utils import timezone

    Run.objects.filter(pk=run_id, grading_enqueued_at__isnull=True).update(grading_enqueued_at=timezone.now())


def compute_content_hash(key: dict[str, Any], uploads: Sequence[Upload]) -> str:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode())
    for upload in sorted(uploads, key=lambda u: (u.kind, u.name, u.sha256)):
        digest.update(f"\0{upload.kind}\0{upload.name}\0{upload.sha256}".encode())
    return digest.hexdigest()


# --- trajectories and outcomes -----------------------------------------------------------------


def _import_trajectory(run: Run, uploads: Sequence[Upload], parsed, run_folder: Path | None,
                       scratch: Path, written: Written) -> None:
    """Steps from the given trajectory, else the run folder's, else the first upload an importer knows;
    the workspace files its folder kept (MLAgentBench's traces/step_*_files) are stored with them."""
    if parsed is not None:
        _save_steps(run, parsed, "the trajectory", written)
        research_traces.keep_workspaces(run, parsed.workspaces, written)
        return
    if run_folder is not None and _import_from(run, run_folder, written):
        return
    unreadable = []
    for number, upload in enumerate(uploads):
        if upload.kind not in (Artifact.Kind.TRAJECTORY, Artifact.Kind.LOG):
            continue
        with local_copy(upload.file, scratch / "detect", upload.name) as path:
            if _import_from(run, path, written):  # steps are read lazily: import while the copy exists
                return
            if upload.kind == Artifact.Kind.TRAJECTORY and _claims_a_trajectory(path):
                unreadable.append(upload.name)
        if is_archive(upload.name):  # a zipped log folder, e.g. MLAgentBench's env_log/ + agent_log/
            folder = expand_archive(upload.file, scratch / f"trajectory-{number}" / "folder")
            if _import_from(run, single_root(folder), written):
                return
    if unreadable:  # the CLI refuses these too (import_run: "not ... a known trajectory format")
        raise UploadError(f"could not read the trajectory {unreadable[0]}: it is not a format Medalboard knows "
                          f"({KNOWN_FORMATS}); see docs/trajectory-format.md")


TRAJECTORY_SUFFIXES = (".json", ".jsonl", ".eval", ".traj")
KNOWN_FORMATS = ("an AIDE journal, an Inspect .eval or .json log, OpenHands, SWE-agent .traj, MLAgentBench, "
                 "Medalboard JSONL")


def _claims_a_trajectory(path: Path) -> bool:
    """A file sent as a trajectory that looks like one (by name or as JSON text) must be readable;
    a plain text log beside a submission is kept as a file."""
    if path.name.lower().endswith(TRAJECTORY_SUFFIXES):
        return True
    with path.open("rb") as f:
        head = f.read(64).lstrip()
    return head[:1] in (b"{", b"[") or head[:2] in (b"\xff\xfe", b"\xfe\xff")


def _import_from(run: Run, path: Path, written: Written) -> bool:
    from leaderboard.trajectories.importers import TrajectoryError, detect, read_trajectories

    if detect(path) is None:
        return False
    try:
        trajectories = iter(read_trajectories(path))
        parsed = next(trajectories, None)
        if parsed is None:
            return False
        _save_steps(run, parsed, path.name, written)
        research_traces.keep_workspaces(run, parsed.workspaces, written)
        others = sum(1 for _ in trajectories)  # e.g. the other samples of an Inspect log (each read bounded)
    except TrajectoryError as exc:
        raise UploadError(f"could not read the trajectory {path.name}: {exc}") from exc
    if others:
        run.import_warnings = [*run.import_warnings, (
            f"{path.name} holds {others + 1} trajectories (samples); this run has the first. "
            "`manage.py import_run` imports one run per sample.")]
        run.save(update_fields=["import_warnings"])
    return True


def _save_steps(run: Run, parsed, name: str, written: Written) -> None:
    """Store the steps; their file is deleted with the uploads if the submission fails later."""
    from leaderboard.trajectories.importers import save_steps

    try:
        save_steps(run, parsed)
        written.names.append(run.trajectory.file)
    except Exception as exc:  # noqa: BLE001 - an importer bug must refuse the upload, not half-save it
        raise UploadError(f"could not import {name}: {exc}") from exc
    if run.n_steps == 0:
        why = "; ".join(run.import_warnings[:3])
        raise UploadError(f"could not read the trajectory {name}: it holds no readable steps"
                          + (f" ({why})" if why else ""))


# --- editing and deleting ----------------------------------------------------------------------


@transaction.atomic
def update_run(*, run: Run, user, notes: str, is_private: bool) -> Run:
    if not run.can_edit(user):
        raise PermissionError("only the run's owner or staff can edit it")
    run.notes, run.is_private = notes, is_private
    run.save(update_fields=["notes", "is_private", "updated_at"])
    return run


def delete_run(*, run: Run, user) -> None:
    if not run.can_edit(user):
        raise PermissionError("only the run's owner or staff can delete it")
    names = [a.file.name for a in run.artifacts.all() if a.file]
    with transaction.atomic():
        run.delete()
        transaction.on_commit(lambda: [default_storage.delete(name) for name in names])

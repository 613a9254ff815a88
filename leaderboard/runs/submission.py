"""Workflows that touch several models. Every way a run comes in (the upload form, the REST API,
`manage.py import_run`, the demo seeder) goes through `submit_run`, so validation, idempotency,
storage and grading behave the same whichever door was used.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction

from leaderboard.competitions import medals
from leaderboard.models import Agent, Artifact, Competition, Experiment, LanguageModel, Run, Team, owner_key
from leaderboard.runs import archives, quotas, snapshots

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger(__name__)
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
CODE_SUFFIXES = {".py", ".ipynb", ".r", ".sh", ".jl", ".cpp", ".c"}
MAX_NAME_BYTES = 255  # the longest file or folder name most file systems store
MAX_MEMBER_PATH = 500  # Artifact.name's length
# Errors of the artifact storage itself (read-only, full, no permission): the site's fault, not the upload's.
STORAGE_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT}


class UploadError(Exception):
    """An upload was refused; the message says why, in words a user can act on."""


class StorageUnavailable(Exception):
    """The artifact storage refused a write; the upload is fine and can be sent again later."""


@dataclass
class Upload:
    """One file to store with a run: its kind, the name it had in the run folder, its content."""

    kind: str
    name: str
    file: File
    sha256: str = ""
    size: int = 0


@dataclass
class _Written:
    names: list[str] = field(default_factory=list)

    def delete_all(self) -> None:
        for name in self.names:
            default_storage.delete(name)


# --- the service -------------------------------------------------------------------------------


def submit_run(
    *,
    owner,
    competition: str,
    agent_name: str,
    model_name: str,
    agent_version: str = "",
    hardware: str = "",
    gpu_type: str = "",
    gpu_count: int = 0,
    cpu_count: int | None = None,
    memory_gb: float | None = None,
    time_limit_hours: float | None = None,
    experiment_settings: dict[str, Any] | None = None,
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
    """
    agent_name, model_name, competition = agent_name.strip(), model_name.strip(), competition.strip()
    if not agent_name or not model_name:
        raise UploadError("an agent name and a model name are required")
    if not competition and parsed_trajectory is None and not trajectory_files and run_folder is None:
        raise UploadError("say which competition (or task) the run is for")
    if team is not None and not team.members.filter(pk=getattr(owner, "pk", None)).exists():
        raise UploadError(f"only members of the team {team.name!r} can upload its runs")
    with tempfile.TemporaryDirectory(prefix="medalboard-upload-") as scratch:
        snapshot_uploads = [Upload(Artifact.Kind.SNAPSHOT, snapshots.name_for(seconds), f) for seconds, f in
                            zip(_snapshot_times([f.name or "" for f in snapshot_files]), snapshot_files, strict=True)]
        uploads, run_folder = _collect_uploads(
            submission, trajectory_files, [*snapshot_uploads, *extra_files], run_folder, Path(scratch)
        )
        _snapshot_times([u.name for u in uploads if u.kind == Artifact.Kind.SNAPSHOT])
        key = {
            "owner": getattr(owner, "pk", None), "competition": competition, "agent": agent_name,
            "agent_version": agent_version, "model": model_name, "hardware": hardware, "gpu_type": gpu_type,
            "gpu_count": gpu_count, "time_limit_hours": time_limit_hours, "seed": seed,
            "settings": experiment_settings or {}, "score": self_reported_score,
            "sample": getattr(getattr(parsed_trajectory, "meta", None), "sample_id", None),
            "team": getattr(team, "pk", None),
        }
        content_hash = compute_content_hash(key, uploads)
        existing = Run.objects.filter(content_hash=content_hash).first()
        if existing is not None:
            return _repeat(existing, is_private=is_private, notes=notes)
        if origin == Run.Origin.UPLOAD and any(u.kind == Artifact.Kind.SUBMISSION for u in uploads):
            quotas.check_quota(user=owner, competition=Competition.objects.filter(slug=competition).first())
        written = _Written()
        try:
            with transaction.atomic():
                experiment = get_or_create_experiment(
                    agent_name=agent_name, agent_version=agent_version, model_name=model_name,
                    hardware=hardware, gpu_type=gpu_type, gpu_count=gpu_count, cpu_count=cpu_count,
                    memory_gb=memory_gb, time_limit_hours=time_limit_hours, experiment_settings=experiment_settings,
                    owner=team or owner,
                )
                run = _create_run(
                    experiment=experiment, competition=Competition.objects.filter(slug=competition).first(),
                    task_name=competition, seed=seed, owner=owner, is_private=is_private, origin=origin,
                    verification=verification or Run.Verification.SELF_REPORTED, notes=notes,
                    content_hash=content_hash,
                )
                for upload in uploads:
                    _store_artifact(run, upload, written)
                _import_trajectory(run, uploads, parsed_trajectory, run_folder, Path(scratch), written)
                if not run.task_name:
                    raise UploadError("say which competition (or task) the run is for: the trajectory does not")
                _set_outcome(run, uploads, self_reported_score, reported)
                if run.status == Run.Status.PENDING:
                    transaction.on_commit(lambda: _enqueue_grading(run.pk))
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


def _enqueue_grading(run_id: int) -> None:
    from leaderboard.tasks import grade_run
    from webapp.celery import publish

    if publish(grade_run, [run_id], what=f"grading of run {run_id}") is None:
        return  # the run stays pending; the sweep (leaderboard.runs.recovery) enqueues it again
    from django.utils import timezone

    Run.objects.filter(pk=run_id, grading_enqueued_at__isnull=True).update(grading_enqueued_at=timezone.now())


def get_or_create_experiment(
    *, agent_name: str, agent_version: str, model_name: str, hardware: str, gpu_type: str = "",
    gpu_count: int = 0, cpu_count: int | None = None, memory_gb: float | None = None,
    time_limit_hours: float | None = None, experiment_settings: dict[str, Any] | None = None,
    owner: User | Team | None = None,
) -> Experiment:
    """The owner's experiment of this configuration: a user, a team, or None (catalogue, demo and
    published data). Two owners with the same agent and model names never share one."""
    agent, _ = Agent.objects.get_or_create(name=agent_name, version=agent_version)
    model, _ = LanguageModel.objects.get_or_create(name=model_name)
    hardware = hardware.strip() or describe_hardware(gpu_type, gpu_count, cpu_count, memory_gb)
    experiment, _ = Experiment.objects.get_or_create(
        agent=agent, model=model, hardware=hardware, time_limit_hours=time_limit_hours,
        settings_hash=settings_hash(experiment_settings), owner_key=owner_key(owner),
        defaults={
            "gpu_type": gpu_type, "gpu_count": gpu_count or 0, "cpu_count": cpu_count,
            "memory_gb": memory_gb, "settings": experiment_settings or {},
            "team": owner if isinstance(owner, Team) else None,
            "owner": None if owner is None or isinstance(owner, Team) else owner,
        },
    )
    return experiment


def describe_hardware(gpu_type: str, gpu_count: int, cpu_count: int | None, memory_gb: float | None) -> str:
    parts = []
    if gpu_count:
        parts.append(f"{gpu_count}x {gpu_type or 'GPU'}")
    if cpu_count:
        parts.append(f"{cpu_count} vCPU")
    if memory_gb:
        parts.append(f"{memory_gb:g} GB")
    return ", ".join(parts)


def settings_hash(experiment_settings: dict[str, Any] | None) -> str:
    if not experiment_settings:
        return ""
    canonical = json.dumps(experiment_settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def compute_content_hash(key: dict[str, Any], uploads: Sequence[Upload]) -> str:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode())
    for upload in sorted(uploads, key=lambda u: (u.kind, u.name, u.sha256)):
        digest.update(f"\0{upload.kind}\0{upload.name}\0{upload.sha256}".encode())
    return digest.hexdigest()


# --- files -------------------------------------------------------------------------------------


def _collect_uploads(
    submission: File | None, trajectory_files: Sequence[File], extra_files: Sequence[Upload],
    run_folder: Path | None, scratch: Path,
) -> tuple[list[Upload], Path | None]:
    uploads: list[Upload] = []
    if submission is not None and _is_archive(submission.name or ""):
        run_folder = _expand_archive(submission, scratch / "archive")
        if not any(p.is_file() for p in run_folder.rglob("*")):
            raise UploadError(f"{_basename(submission.name)} holds no files: nothing to make a run of")
        submission = None
    if run_folder is not None:
        run_folder = _single_root(run_folder)
        uploads += uploads_from_folder(run_folder)
    if submission is not None:
        uploads.append(Upload(Artifact.Kind.SUBMISSION, _basename(submission.name) or "submission.csv", submission))
    uploads += [Upload(Artifact.Kind.TRAJECTORY, _basename(f.name) or "trajectory", f) for f in trajectory_files]
    uploads += list(extra_files)
    total = 0
    for upload in uploads:
        _check_name(upload.name)
        upload.size, upload.sha256 = _measure(upload.file)
        total += upload.size
    if total > settings.MAX_UPLOAD_BYTES:
        raise UploadError(f"the upload is {total:,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes")
    return uploads, run_folder


def _measure(file: File) -> tuple[int, str]:
    digest, size = hashlib.sha256(), 0
    file.seek(0)
    for chunk in file.chunks():
        digest.update(chunk)
        size += len(chunk)
        if size > settings.MAX_UPLOAD_BYTES:
            raise UploadError(f"{_basename(file.name)} is larger than the {settings.MAX_UPLOAD_BYTES:,}-byte limit")
    file.seek(0)
    return size, digest.hexdigest()


def _check_name(name: str) -> None:
    """Names are stored on disk and in Artifact.name: refuse what neither can hold."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    long = next((part for part in parts if len(part.encode()) > MAX_NAME_BYTES), None)
    if long is not None:
        raise UploadError(f"the file name {long[:60]!r}... is longer than {MAX_NAME_BYTES} bytes")
    if len(name) > MAX_MEMBER_PATH:
        raise UploadError(f"the path {name[:60]!r}... is longer than {MAX_MEMBER_PATH} characters")


def _basename(name: str | None) -> str:
    return PurePosixPath((name or "").replace("\\", "/")).name


def _is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def _store_artifact(run: Run, upload: Upload, written: _Written) -> Artifact:
    artifact = Artifact(run=run, kind=upload.kind, name=upload.name, size=upload.size, sha256=upload.sha256)
    upload.file.seek(0)
    artifact.file.save(_basename(upload.name) or "file", upload.file, save=False)
    written.names.append(artifact.file.name)
    artifact.save()
    if upload.kind == Artifact.Kind.SNAPSHOT:
        snapshots.register(run=run, artifact=artifact)
    return artifact


def store_upload(run: Run, upload: Upload) -> Artifact:
    """Measure and store one file of an existing run (a runner's live snapshot)."""
    upload.size, upload.sha256 = _measure(upload.file)
    return _store_artifact(run, upload, _Written())


@contextmanager
def local_copy(upload_file: File, scratch: Path, name: str) -> Iterator[Path]:
    """A path on disk with the file's original name (importers detect formats by name and content)."""
    scratch.mkdir(parents=True, exist_ok=True)
    target = Path(tempfile.mkdtemp(dir=scratch)) / (_basename(name) or "file")
    upload_file.seek(0)
    with target.open("wb") as out:
        for chunk in upload_file.chunks():
            out.write(chunk)
    upload_file.seek(0)
    try:
        yield target
    finally:
        shutil.rmtree(target.parent, ignore_errors=True)


def artifact_path(artifact: Artifact, scratch: Path) -> Path:
    """A local path for a stored artifact: the file itself on local storage, else a copy in scratch."""
    try:
        return Path(artifact.file.path)
    except NotImplementedError:
        target = scratch / _basename(artifact.name)
        with artifact.file.open("rb") as src, target.open("wb") as out:
            shutil.copyfileobj(src, out)
        return target


# --- archives of run folders -------------------------------------------------------------------


def _expand_archive(archive: File, target: Path) -> Path:
    """Unpack a run folder under the archive limits (leaderboard.runs.archives): member paths stay inside,
    names fit storage, no member is both a file and a folder."""
    target.mkdir(parents=True)
    archive_path = target.parent / "upload-archive"
    with archive_path.open("wb") as out:
        for chunk in archive.chunks():
            out.write(chunk)
    archive.seek(0)
    try:
        with archives.open_archive(archive_path) as unpacked:
            names = unpacked.names()
            for name in names:
                _check_name(name)
            _check_file_and_folder(names)
            unpacked.extract_to(target)
    except archives.NotAnArchive:
        raise UploadError(f"{_basename(archive.name)} is not a readable .zip or .tar archive") from None
    except archives.ArchiveError as exc:
        raise UploadError(str(exc)) from None
    return target


def _check_file_and_folder(names: list[str]) -> None:
    """A member that is a file cannot also be the folder of another member (`a` and `a/b`)."""
    files = {PurePosixPath(name.replace("\\", "/")) for name in names}
    folders = {parent for path in files for parent in path.parents}
    both = sorted(files & folders)
    if both:
        raise UploadError(f"the archive holds both a file and a folder named {str(both[0])!r}")


def uploads_from_folder(folder: Path) -> list[Upload]:
    """A MLE-bench run folder as uploads: submission/submission.csv, snapshots/<seconds>.csv, logs/, code/."""
    uploads: list[Upload] = []
    submission = _find_submission(folder)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if path == submission:
            kind = Artifact.Kind.SUBMISSION
        elif rel.startswith(f"{snapshots.FOLDER}/") and path.suffix.lower() == ".csv":
            kind = Artifact.Kind.SNAPSHOT
        elif rel.startswith("code/") or path.suffix.lower() in CODE_SUFFIXES:
            kind = Artifact.Kind.CODE
        elif path.name == "metadata.json":
            kind = Artifact.Kind.OTHER
        else:
            kind = Artifact.Kind.LOG
        uploads.append(Upload(kind, rel, File(path.open("rb"), name=path.name)))
    return uploads


def _single_root(folder: Path) -> Path:
    entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir() and not (folder / "submission").exists():
        return _single_root(entries[0])
    return folder


def _find_submission(folder: Path) -> Path | None:
    for candidate in (folder / "submission" / "submission.csv", folder / "submission.csv"):
        if candidate.is_file():
            return candidate
    found = sorted(folder.glob("submission/*.csv"))
    return found[0] if found else None


# --- trajectories and outcomes -----------------------------------------------------------------


def _import_trajectory(run: Run, uploads: Sequence[Upload], parsed, run_folder: Path | None,
                       scratch: Path, written: _Written) -> None:
    """Steps from the given trajectory, else the run folder's, else the first upload an importer knows."""
    if parsed is not None:
        _save_steps(run, parsed, "the trajectory", written)
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
        if _is_archive(upload.name):  # a zipped log folder, e.g. MLAgentBench's env_log/ + agent_log/
            folder = _expand_archive(upload.file, scratch / f"trajectory-{number}" / "folder")
            if _import_from(run, _single_root(folder), written):
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


def _import_from(run: Run, path: Path, written: _Written) -> bool:
    from leaderboard.trajectories.importers import TrajectoryError, detect, read_trajectories

    if detect(path) is None:
        return False
    try:
        trajectories = iter(read_trajectories(path))
        parsed = next(trajectories, None)
        if parsed is None:
            return False
        _save_steps(run, parsed, path.name, written)
        others = sum(1 for _ in trajectories)  # e.g. the other samples of an Inspect log (each read bounded)
    except TrajectoryError as exc:
        raise UploadError(f"could not read the trajectory {path.name}: {exc}") from exc
    if others:
        run.import_warnings = [*run.import_warnings, (
            f"{path.name} holds {others + 1} trajectories (samples); this run has the first. "
            "`manage.py import_run` imports one run per sample.")]
        run.save(update_fields=["import_warnings"])
    return True


def _save_steps(run: Run, parsed, name: str, written: _Written) -> None:
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


def _set_outcome(run: Run, uploads: Sequence[Upload], score: float | None, reported: dict | None) -> None:
    has_submission = any(u.kind == Artifact.Kind.SUBMISSION for u in uploads)
    if has_submission and run.competition_id is not None and score is None:
        run.status = Run.Status.PENDING  # graded by leaderboard.tasks.grade_run after commit
        run.submission_exists = True
        run.save()
        return
    if score is None and reported is None:
        run.status = Run.Status.GRADED
        run.submission_exists = has_submission
        run.grading_report = {"note": "no submission to grade" if not has_submission
                              else "the task is not in the catalogue, so it cannot be graded here"}
        run.save()
        return
    record_self_reported(run, score=score, reported=reported or {})


def record_self_reported(run: Run, *, score: float | None, reported: dict[str, Any]) -> None:
    """Take a score as reported; medals are recomputed from our own human leaderboard.

    Only a grading report can say a submission existed and was valid: a bare claimed score is never
    one (it stays self-reported, and leaderboards list it after verified results)."""
    run.score = score
    run.submission_exists = bool(reported.get("submission_exists", False))
    run.valid_submission = bool(reported.get("valid_submission", False))
    competition = run.competition
    apply_medals(run, competition)
    run.verification = Run.Verification.SELF_REPORTED
    run.status = Run.Status.GRADED
    run.grading_report = {"reported": reported, "medals_recomputed_here": True}
    run.save()


def apply_medals(run: Run, competition: Competition | None) -> None:
    """Medals, rank and share of humans beaten for run.score (or a snapshot's), from the competition's leaderboard."""
    thresholds = competition.thresholds() if competition is not None else None
    run.set_medals(medals.award(run.score, thresholds))
    run.human_rank = run.beats_human_pct = None
    if thresholds is not None and run.score is not None and run.score == run.score:
        scores = list(competition.human_scores.values_list("score", flat=True))
        placing = medals.place(run.score, scores, thresholds.is_lower_better)
        run.human_rank, run.beats_human_pct = placing.rank, placing.beats_pct


# --- grading a stored run (called by leaderboard.tasks.grade_run) --------------------------------


def grade_stored_run(run: Run, fence=None) -> Run:
    """Grade the run's submission against the competition's answers and store the outcome; `fence`,
    if given, runs first in the transaction that stores it (it raises if the grader lost its claim)."""
    from leaderboard.grading import grade_submission

    submission = run.artifacts.filter(kind=Artifact.Kind.SUBMISSION).first()
    with tempfile.TemporaryDirectory(prefix="medalboard-grade-") as scratch:
        path = artifact_path(submission, Path(scratch)) if submission is not None else None
        report = grade_submission(run.competition, path)
    with transaction.atomic():
        if fence is not None:
            fence()
        store_report(run, report)
    return run


def copy_outcome(target, report, competition: Competition | None) -> bool:
    """A grading report's outcome onto a run or a snapshot; returns whether anything was judged."""
    target.score = report.score
    target.submission_exists = bool(report.submission_exists)
    target.valid_submission = bool(report.valid_submission)
    apply_medals(target, competition)
    if report.human_rank is not None:
        target.human_rank, target.beats_human_pct = report.human_rank, report.beats_human_pct
    target.grading_report = report.to_dict()
    target.grading_error = report.error or ""
    return getattr(report, "grading_available", True)


def store_report(run: Run, report) -> None:
    available = copy_outcome(run, report, run.competition)
    run.status = Run.Status.GRADED if available else Run.Status.FAILED
    if getattr(report, "awaiting_answers", False):
        run.status = Run.Status.WAITING
    if available:
        run.verification = Run.Verification.VERIFIED
    run.save()


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

"""A run's files: checked, measured and stored as artifacts, and run folders unpacked from archives
under the archive limits. The bottom of the runs write side: it knows storage, not workflows."""

from __future__ import annotations

import errno
import hashlib
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.core.files import File
from django.core.files.storage import default_storage
from django.utils.text import get_valid_filename

from leaderboard.lib import archives
from leaderboard.models import Artifact, Run

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
CODE_SUFFIXES = {".py", ".ipynb", ".r", ".sh", ".jl", ".cpp", ".c"}
MAX_NAME_BYTES = 255  # the longest file or folder name most file systems store
MAX_MEMBER_PATH = 500  # Artifact.name's length
# The longest name a file is stored under: with "runs/YYYY/MM/" and the suffix storage adds to a taken
# name, it fits FileField's 100 characters, and any file system's 255 bytes.
STORAGE_NAME_CHARS = 60
_SAFE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}")
# Errors of the artifact storage itself (read-only, full, no permission): the site's fault, not the upload's.
STORAGE_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT}
SNAPSHOTS_FOLDER = "snapshots"  # a run folder's snapshots/<seconds>.csv (leaderboard.runs.snapshots)


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
class Written:
    names: list[str] = field(default_factory=list)

    def delete_all(self) -> None:
        for name in self.names:
            default_storage.delete(name)


def collect_uploads(
    submission: File | None, trajectory_files: Sequence[File], extra_files: Sequence[Upload],
    run_folder: Path | None, scratch: Path,
) -> tuple[list[Upload], Path | None]:
    uploads: list[Upload] = []
    if submission is not None and is_archive(submission.name or ""):
        run_folder = expand_archive(submission, scratch / "archive")
        if not any(p.is_file() for p in run_folder.rglob("*")):
            raise UploadError(f"{basename(submission.name)} holds no files: nothing to make a run of")
        submission = None
    if run_folder is not None:
        run_folder = single_root(run_folder)
        uploads += uploads_from_folder(run_folder)
    if submission is not None:
        uploads.append(Upload(Artifact.Kind.SUBMISSION, basename(submission.name) or "submission.csv", submission))
    uploads += [Upload(Artifact.Kind.TRAJECTORY, basename(f.name) or "trajectory", f) for f in trajectory_files]
    uploads += list(extra_files)
    total = 0
    for upload in uploads:
        check_name(upload.name)
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
            raise UploadError(f"{basename(file.name)} is larger than the {settings.MAX_UPLOAD_BYTES:,}-byte limit")
    file.seek(0)
    return size, digest.hexdigest()


def check_name(name: str) -> None:
    """Names are stored on disk and in Artifact.name: refuse (UploadError) what neither can hold."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    long = next((part for part in parts if len(part.encode()) > MAX_NAME_BYTES), None)
    if long is not None:
        raise UploadError(f"the file name {long[:60]!r}... is longer than {MAX_NAME_BYTES} bytes")
    if len(name) > MAX_MEMBER_PATH:
        raise UploadError(f"the path {name[:60]!r}... is longer than {MAX_MEMBER_PATH} characters")


def basename(name: str | None) -> str:
    return PurePosixPath((name or "").replace("\\", "/")).name


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def storage_name(name: str) -> str:
    """The name a file is stored under: storage's cleaned form of its own (spaces to "_", odd
    characters dropped) when that is a short name, else one derived from it (`file-<digest>`, with its
    extension when that is plain). Artifact.name keeps the original: names such as "~", " ", "@@@", one
    of 200 characters or with 50 extensions come from agents, and storage refuses them."""
    base = basename(name)
    try:
        valid = get_valid_filename(base)
    except SuspiciousFileOperation:
        valid = ""
    if valid and len(valid.encode()) <= STORAGE_NAME_CHARS:
        return valid
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    suffix = PurePosixPath(valid).suffix
    return f"file-{digest}{suffix if _SAFE_SUFFIX.fullmatch(suffix) else ''}"


def store_artifact(run: Run, upload: Upload, written: Written) -> Artifact:
    artifact = Artifact(run=run, kind=upload.kind, name=upload.name, size=upload.size, sha256=upload.sha256)
    upload.file.seek(0)
    artifact.file.save(storage_name(upload.name), upload.file, save=False)
    written.names.append(artifact.file.name)
    try:
        artifact.save()
    except BaseException:  # the row was refused: its file would be stored for nothing
        default_storage.delete(artifact.file.name)
        written.names.pop()
        raise
    return artifact


def store_upload(run: Run, upload: Upload, written: Written | None = None) -> Artifact:
    """Measure and store one file of an existing run (a runner's live snapshot, a trace's step files)."""
    upload.size, upload.sha256 = _measure(upload.file)
    return store_artifact(run, upload, written or Written())


@contextmanager
def local_copy(upload_file: File, scratch: Path, name: str) -> Iterator[Path]:
    """A path on disk with the file's original name (importers detect formats by name and content)."""
    scratch.mkdir(parents=True, exist_ok=True)
    target = Path(tempfile.mkdtemp(dir=scratch)) / (basename(name) or "file")
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
        target = scratch / basename(artifact.name)
        with artifact.file.open("rb") as src, target.open("wb") as out:
            shutil.copyfileobj(src, out)
        return target


# --- archives of run folders -------------------------------------------------------------------


def expand_archive(archive: File, target: Path) -> Path:
    """Unpack a run folder under the archive limits (leaderboard.lib.archives): member paths stay inside,
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
                check_name(name)
            _check_file_and_folder(names)
            unpacked.extract_to(target)
    except archives.NotAnArchive:
        raise UploadError(f"{basename(archive.name)} is not a readable .zip or .tar archive") from None
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
        elif rel.startswith(f"{SNAPSHOTS_FOLDER}/") and path.suffix.lower() == ".csv":
            kind = Artifact.Kind.SNAPSHOT
        elif rel.startswith("code/") or path.suffix.lower() in CODE_SUFFIXES:
            kind = Artifact.Kind.CODE
        elif path.name == "metadata.json":
            kind = Artifact.Kind.OTHER
        else:
            kind = Artifact.Kind.LOG
        uploads.append(Upload(kind, rel, File(path.open("rb"), name=path.name)))
    return uploads


def single_root(folder: Path) -> Path:
    entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir() and not (folder / "submission").exists():
        return single_root(entries[0])
    return folder


def _find_submission(folder: Path) -> Path | None:
    for candidate in (folder / "submission" / "submission.csv", folder / "submission.csv"):
        if candidate.is_file():
            return candidate
    found = sorted(folder.glob("submission/*.csv"))
    return found[0] if found else None

"""Every archive the site reads (an uploaded .zip or .tar[.gz|.bz2|.xz] run folder, an Inspect .eval,
which is a zip) is read through here, streaming, under one set of caps:

- the bytes it unpacks to in all (MEDALBOARD_ARCHIVE_MAX_BYTES; 0: the upload limit),
- the bytes one member unpacks to (MEDALBOARD_ARCHIVE_MEMBER_MAX_BYTES),
- the ratio of unpacked to packed bytes, per zip member and for the whole archive
  (MEDALBOARD_ARCHIVE_MAX_RATIO; judged past RATIO_FLOOR, since small files compress freely),
- the member count (MEDALBOARD_ARCHIVE_MAX_MEMBERS), checked from the zip's end record before its
  directory is parsed, so a directory of millions of entries is never loaded.

A small archive can hold a huge member (1.5 MB of zip holding 1.5 GB of zeros): each member is judged
from its header first, then again by the bytes that really come out, chunk by chunk, so reading
stops at the cap, never after. Zip members must be stored or deflated (bzip2 and lzma inflate a whole
block at once, however small the read) and not encrypted; tar members must be files or folders.
Member paths stay inside the archive's folder. An ArchiveError names the member and the limit.

    with open_archive(path) as archive:
        members = archive.members()      # judged from their headers
        data = archive.read("header.json")
        archive.extract_to(folder)
"""

from __future__ import annotations

import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from django.conf import settings

CHUNK = 1 << 20
RATIO_FLOOR = 1 << 20  # below a MiB unpacked, any ratio is fine (a small file of spaces compresses 1000x)
DIRECTORY_ENTRY_BYTES = 1024  # a generous zip directory entry: 46 bytes, a long name, extra fields
ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
READ_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, tarfile.TarError, EOFError, zlib.error, OSError)


class ArchiveError(Exception):
    """The archive is refused: too large, a bomb, damaged or unsafe; the message says which member."""


class NotAnArchive(ArchiveError):
    """Neither a zip nor a tar archive."""


class DamagedArchive(ArchiveError):
    """The archive (or one member) cannot be read: truncated, a bad checksum, a broken stream."""


@dataclass(frozen=True)
class Limits:
    total_bytes: int
    member_bytes: int
    ratio: float
    members: int

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(total_bytes=settings.ARCHIVE_MAX_BYTES or settings.MAX_UPLOAD_BYTES,
                   member_bytes=settings.ARCHIVE_MEMBER_MAX_BYTES, ratio=settings.ARCHIVE_MAX_RATIO,
                   members=settings.ARCHIVE_MAX_MEMBERS)


@dataclass(frozen=True)
class Member:
    name: str
    size: int  # what its header claims
    packed: int | None  # its compressed size, where the format records one (zip)
    ref: Any = field(repr=False, compare=False, default=None)


class _Meter:
    """Bytes unpacked so far, judged against the limits as they grow."""

    def __init__(self, limits: Limits, archive_bytes: int) -> None:
        self.limits, self.archive_bytes, self.total = limits, max(archive_bytes, 1), 0

    def judge(self, member: Member, size: int) -> None:
        """`member` unpacks to `size` bytes (claimed, or counted so far)."""
        limits = self.limits
        if size > limits.member_bytes:
            raise ArchiveError(f"the archive member {member.name!r} unpacks to more than {limits.member_bytes:,} "
                               "bytes, the limit for one member")
        if member.packed is not None and size > RATIO_FLOOR and size > limits.ratio * max(member.packed, 1):
            raise ArchiveError(f"the archive member {member.name!r} unpacks to more than {limits.ratio:g} times "
                               f"its packed {member.packed:,} bytes: refused as an archive bomb")

    def add(self, member: Member, size: int) -> None:
        self.total += size
        limits = self.limits
        if self.total > limits.total_bytes:
            raise ArchiveError(f"the archive unpacks to more than {limits.total_bytes:,} bytes, the limit "
                               f"(passed at {member.name!r})")
        if self.total > RATIO_FLOOR and self.total > limits.ratio * self.archive_bytes:
            raise ArchiveError(f"the archive unpacks to more than {limits.ratio:g} times its {self.archive_bytes:,} "
                               f"bytes (passed at {member.name!r}): refused as an archive bomb")


class Archive:
    """The members of one archive, read under the limits; use as a context manager."""

    def __init__(self, path: Path, limits: Limits | None) -> None:
        self.path, self.limits = path, limits or Limits.from_settings()
        self._meter = _Meter(self.limits, path.stat().st_size)
        self._members: dict[str, Member] | None = None

    def members(self) -> list[Member]:
        """The files of the archive, each judged from its header (size, ratio, path, count)."""
        if self._members is None:
            claimed = _Meter(self.limits, self.path.stat().st_size)
            found: dict[str, Member] = {}
            with _read_errors(self.path.name):
                for count, member in enumerate(self._headers(), 1):
                    _check_path(member.name)
                    if count > self.limits.members:
                        raise ArchiveError(f"the archive has more than {self.limits.members:,} members, the limit")
                    if member.ref is not None:
                        claimed.judge(member, member.size)
                        claimed.add(member, member.size)
                        found[member.name] = member
            self._members = found
        return list(self._members.values())

    def names(self) -> list[str]:
        return [member.name for member in self.members()]

    def chunks(self, name: str) -> Iterator[bytes]:
        """The member's bytes as they come out, stopped with ArchiveError at the first one over a limit."""
        member = self._member(name)
        with _read_errors(f"{self.path.name}: {name}"), self._open(member) as stream:
            count = 0
            while chunk := stream.read(CHUNK):
                count += len(chunk)
                self._meter.judge(member, count)
                self._meter.add(member, len(chunk))
                yield chunk

    def read(self, name: str) -> bytes:
        """The whole member (KeyError if there is none of that name), at most the member limit."""
        return b"".join(self.chunks(name))

    def extract_to(self, target: Path) -> None:
        """Every file into `target`, under the same paths (checked to stay inside)."""
        for member in self.members():
            dest = target / member.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            with dest.open("wb") as out:
                for chunk in self.chunks(member.name):
                    out.write(chunk)

    def _member(self, name: str) -> Member:
        members = {m.name: m for m in self.members()}
        if name not in members:
            raise KeyError(name)
        return members[name]

    def _headers(self) -> Iterator[Member]:
        """Every entry; folders with ref None. Raises ArchiveError for an entry never accepted."""
        raise NotImplementedError

    def _open(self, member: Member) -> IO[bytes]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ZipArchive(Archive):
    def __init__(self, path: Path, limits: Limits | None = None) -> None:
        super().__init__(path, limits)
        _check_directory(path, self.limits)
        with _read_errors(path.name):
            self._zip = zipfile.ZipFile(path)

    def _headers(self) -> Iterator[Member]:
        for info in self._zip.infolist():
            if info.is_dir():
                yield Member(info.filename, 0, None)
                continue
            if info.compress_type not in ZIP_METHODS:
                raise ArchiveError(f"the archive member {info.filename!r} is compressed with method "
                                   f"{info.compress_type}; only stored and deflated members are read")
            if info.flag_bits & 0x1:
                raise ArchiveError(f"the archive member {info.filename!r} is encrypted")
            yield Member(info.filename, info.file_size, info.compress_size, info)

    def directory_names(self) -> list[str]:
        """The names the zip's directory lists, none judged (for telling formats apart)."""
        return self._zip.namelist()

    def _open(self, member: Member) -> IO[bytes]:
        return self._zip.open(member.ref)

    def close(self) -> None:
        self._zip.close()


class TarArchive(Archive):
    """Headers are read one by one, so a member too large is refused from its own header before its
    data is inflated (listing a compressed tar inflates every member before the last header)."""

    def __init__(self, path: Path, limits: Limits | None = None) -> None:
        super().__init__(path, limits)
        with _read_errors(path.name):
            self._tar = tarfile.open(path)

    def _headers(self) -> Iterator[Member]:
        for info in self._tar:
            if not (info.isfile() or info.isdir()):
                raise ArchiveError(f"the archive member {info.name!r} is a link or device, not a file")
            yield Member(info.name, info.size, None, info if info.isfile() else None)

    def _open(self, member: Member) -> IO[bytes]:
        opened = self._tar.extractfile(member.ref)
        if opened is None:  # only regular files are opened; a directory has nothing to read
            raise ArchiveError(f"the archive member {member.name!r} is not a file")
        return opened

    def close(self) -> None:
        self._tar.close()


def open_archive(path: Path, limits: Limits | None = None) -> Archive:
    """The zip or tar archive at `path`; NotAnArchive if it is neither."""
    if zipfile.is_zipfile(path):
        return ZipArchive(path, limits)
    try:
        is_tar = tarfile.is_tarfile(path)
    except READ_ERRORS:
        is_tar = False
    if is_tar:
        return TarArchive(path, limits)
    raise NotAnArchive(f"{path.name} is not a readable .zip or .tar archive")


def _check_directory(path: Path, limits: Limits) -> None:
    """The member count from the zip's end record, before zipfile parses a directory of any size."""
    with path.open("rb") as fp:
        end = zipfile._EndRecData(fp)  # type: ignore[attr-defined]  # the end record zipfile itself reads first
    if end is None:
        raise ArchiveError(f"{path.name} is not a readable zip archive")
    entries, size = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]  # type: ignore[attr-defined]
    if entries > limits.members or size > limits.members * DIRECTORY_ENTRY_BYTES:
        raise ArchiveError(f"the archive has {entries:,} members ({size:,} bytes of directory); "
                           f"at most {limits.members:,} members are accepted")


def _check_path(name: str) -> None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise ArchiveError(f"the archive member {name!r} points outside the run folder")


class _read_errors:
    """A damaged archive as an ArchiveError naming what was being read."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback):
        if exc is not None and isinstance(exc, READ_ERRORS) and not isinstance(exc, ArchiveError):
            raise DamagedArchive(f"{self.what}: the archive is damaged ({exc.__class__.__name__}: {exc})") from exc
        return False

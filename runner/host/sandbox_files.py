"""Reading what an agent left in its sandbox's folders: files the agent controls, so none is trusted.

Any name in the submission, logs or code folder may be a symbolic link (to the answers, to
/proc/self/environ, to /etc/shadow), a FIFO (a reader blocks on it forever), a device (/dev/zero
never ends), a socket, a folder where a file is expected, or a file that keeps growing while it is
read. Everything the runner reads from those folders goes through this module:

- `open_regular(root, rel)` walks from `root` one component at a time with O_NOFOLLOW (folders
  opened relative to their parent's descriptor, so a link anywhere on the way, or swapped in while
  walking, is refused), opens the file O_NONBLOCK (a FIFO cannot block the open), checks with fstat
  that it is a regular file with one name only (a hard link may be another name of a file outside
  the folder: the answers, a host file), and checks that the descriptor's resolved path is inside
  `root`;
- `walk(root)` lists the regular files below `root` the same way, never entering a linked folder, and
  says what it skipped and why (hard links among them, unless the caller counts rather than reads:
  `hard_links=True` for the measured disk quota, which two names of one big file must not halve);
- `read_at_most(file, limit)` reads a bounded number of bytes;
- `open_up(root)` gives the runner back the folders below `root` that the agent closed to it (a
  runner that is not root runs the sandbox as itself, so a folder of mode 000 could neither be
  measured for the quota nor deleted afterwards); links are never followed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MAX_ENTRIES = 100_000  # names looked at by one walk: an agent can make millions of empty files
MAX_DEPTH = 32
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


class NotRegular(Exception):
    """The name is not a regular file inside the folder; the message says what it is instead."""


@dataclass(frozen=True)
class Entry:
    rel: str  # POSIX path below the walked folder
    size: int
    mtime_ns: int = 0


@dataclass
class Listing:
    files: list[Entry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "<rel>: <why>", for the run's notes


def kind_of(mode: int) -> str:
    """What a file's mode says it is, in words."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(root: Path, rel: str):
    """`root/rel` opened for reading as a binary file object, if it is a regular file inside `root`
    reached without following any link; else NotRegular (FileNotFoundError if it does not exist)."""
    parts = _parts(rel)
    fd = _open_dir(root)
    try:
        for part in parts[:-1]:
            inner = _open_subdir(fd, part, rel)
            os.close(fd)
            fd = inner
        leaf = _open_leaf(fd, parts[-1], rel)
    finally:
        os.close(fd)
    try:
        _check_inside(leaf, root, rel)
    except BaseException:
        os.close(leaf)
        raise
    return os.fdopen(leaf, "rb")


def describe(root: Path, rel: str) -> str | None:
    """What `root/rel` is if it exists and is not a regular file ("a FIFO", ...); None otherwise."""
    try:
        open_regular(root, rel).close()
    except FileNotFoundError:
        return None
    except NotRegular as exc:
        return str(exc)
    return None


def walk(root: Path, *, hard_links: bool = False) -> Listing:
    """The regular files below `root` (sorted), found without following links; the rest skipped.
    Files with more than one name are skipped too, unless `hard_links`."""
    listing = Listing()
    try:
        fd = _open_dir(root)
    except (FileNotFoundError, NotRegular):
        return listing
    try:
        _walk(fd, "", 0, listing, [0], 1 << 62 if hard_links else 1)
    finally:
        os.close(fd)
    return listing


def open_up(root: Path) -> None:
    """Every folder below `root` that the runner owns made readable, writable and searchable by it."""
    try:
        fd = _open_dir(root)
    except (FileNotFoundError, NotRegular):
        return
    try:
        _open_up(fd, 0, [0])
    finally:
        os.close(fd)


def _open_up(fd: int, depth: int, seen: list[int]) -> None:
    try:
        names = os.listdir(fd)
    except OSError:
        return
    for name in names:
        seen[0] += 1
        if seen[0] > MAX_ENTRIES:
            return
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or depth >= MAX_DEPTH:
            continue
        if info.st_mode & 0o700 != 0o700 and info.st_uid == os.getuid():
            try:  # fchmodat without following: a link swapped in meanwhile is refused, not followed
                os.chmod(name, stat.S_IMODE(info.st_mode) | 0o700, dir_fd=fd, follow_symlinks=False)
            except (OSError, ValueError, NotImplementedError):
                continue
        try:
            inner = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue
        try:
            _open_up(inner, depth + 1, seen)
        finally:
            os.close(inner)


def read_at_most(file, limit: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    """The file's bytes from where it stands, `limit` of them at most, in chunks."""
    left = limit
    while left > 0:
        data = file.read(min(chunk, left))
        if not data:
            return
        left -= len(data)
        yield data


def _parts(rel: str) -> list[str]:
    parts = [p for p in PurePosixPath(rel).parts if p not in ("", ".")]
    if not parts or ".." in parts or PurePosixPath(rel).is_absolute():
        raise NotRegular(f"{rel!r} is not a path inside the folder")
    return parts


def _open_dir(root: Path) -> int:
    try:
        return os.open(root, _DIR_FLAGS)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise NotRegular(f"{root.name} is not a plain folder ({exc.strerror})") from None


def _open_subdir(fd: int, part: str, rel: str) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        raise
    except OSError:
        raise NotRegular(f"{rel}: {part} is {_what(fd, part)}, not a folder") from None


def _open_leaf(fd: int, name: str, rel: str) -> int:
    try:
        leaf = os.open(name, _READ_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        raise
    except OSError:  # ELOOP: a link; ENXIO: a socket; EACCES: not ours to read
        raise NotRegular(f"{rel} is {_what(fd, name)}") from None
    info = os.fstat(leaf)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        os.close(leaf)
        raise NotRegular(f"{rel} is {_kind(info)}, not a regular file")
    return leaf


def _kind(info: os.stat_result) -> str:
    """kind_of, but a regular file with more than one name is a hard link: its other name may lie
    anywhere on the file system, so its content is not the folder's to give."""
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        return f"a hard link ({info.st_nlink} names)"
    return kind_of(info.st_mode)


def _what(fd: int, name: str) -> str:
    try:
        return _kind(os.stat(name, dir_fd=fd, follow_symlinks=False))
    except OSError:
        return "unreadable"


def _check_inside(fd: int, root: Path, rel: str) -> None:
    """The descriptor's own path (what the kernel says it opened) must lie inside `root`."""
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return  # no /proc: the component-by-component O_NOFOLLOW walk already guarantees it
    base = os.path.realpath(root)
    if os.path.commonpath([base, opened]) != base:
        raise NotRegular(f"{rel} resolves outside its folder")


def _walk(fd: int, prefix: str, depth: int, listing: Listing, seen: list[int], names_allowed: int) -> None:
    try:
        names = sorted(os.listdir(fd))
    except OSError as exc:
        listing.skipped.append(f"{prefix or '.'}: skipped, cannot be listed ({exc.strerror})")
        return
    for name in names:
        seen[0] += 1
        if seen[0] > MAX_ENTRIES:
            if seen[0] == MAX_ENTRIES + 1:
                listing.skipped.append(f"{prefix or '.'}: more than {MAX_ENTRIES:,} names; the rest skipped")
            return
        rel = prefix + name
        if not _storable_name(name):
            listing.skipped.append(f"{rel.encode('utf-8', 'replace').decode()!r}: skipped, the name is not UTF-8")
            continue
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue  # gone since the listing
        if stat.S_ISREG(info.st_mode) and info.st_nlink <= names_allowed:
            listing.files.append(Entry(rel, info.st_size, info.st_mtime_ns))
        elif stat.S_ISDIR(info.st_mode) and depth < MAX_DEPTH:
            _walk_into(fd, name, rel, depth, listing, seen, names_allowed)
        else:
            why = "nested too deep" if stat.S_ISDIR(info.st_mode) else f"{_kind(info)}, not a regular file"
            listing.skipped.append(f"{rel}: skipped, {why}")


def _walk_into(fd: int, name: str, rel: str, depth: int, listing: Listing, seen: list[int],
               names_allowed: int) -> None:
    try:
        inner = os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError:
        listing.skipped.append(f"{rel}: skipped, {_what(fd, name)} that cannot be opened as a folder")
        return
    try:
        _walk(inner, rel + "/", depth + 1, listing, seen, names_allowed)
    finally:
        os.close(inner)


def _storable_name(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True

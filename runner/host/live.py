"""What the supervisor reads from a sandbox while the agent runs: new trajectory lines and changed
submissions. Both come from folders the agent controls, so every read goes through
runner.host.sandbox_files (regular files only, no link followed, nothing that blocks) and is bounded: the
trajectory is read incrementally, at most READ_PER_TICK bytes a tick and the run's output total in
all, with a partial last line kept up to LINE_LIMIT bytes (a longer line is dropped with a note,
never re-read). The submission is read only when its size or modification time changed, kept only
when neither changed while it was read (a file rewritten under the read is never kept torn: it is
read again at the next tick), and only while its snapshots stay within their share of the run's
output limits (runner.host.output_budget). Secrets are redacted before anything is kept.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from runner.host import sandbox_files
from runner.host.output_budget import Budget
from runner.host.secrets import Redactor

READ_PER_TICK = 16 << 20
LINE_LIMIT = 16 << 20


class LineTail:
    """The complete new lines of a growing file since the last call, as (line number, bytes)."""

    def __init__(self, root: Path, name: str, line_limit: int = LINE_LIMIT, per_tick: int = READ_PER_TICK,
                 most: int | None = None) -> None:
        self.root, self.name, self.line_limit, self.per_tick = root, name, line_limit, per_tick
        self.offset, self.lineno, self.partial, self.dropping = 0, 0, b"", False
        self.most, self.streamed = most, 0  # `most` bytes of lines in all, then nothing more is read
        self.notes: list[str] = []

    def new_lines(self) -> list[tuple[int, bytes]]:
        if self.most is not None and self.streamed >= self.most:
            return []
        return self._within_most(self._lines())

    def _within_most(self, numbered: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        if self.most is None:
            return numbered
        for at, (lineno, line) in enumerate(numbered):
            self.streamed += len(line) + 1
            if self.streamed > self.most:
                self.streamed = self.most
                self._note(f"{self.name}: more than {self.most:,} bytes (the run's output total); line {lineno} "
                           "and later not streamed")
                return numbered[:at]
        return numbered

    def _lines(self) -> list[tuple[int, bytes]]:
        chunk = self._read()
        if not chunk:
            return []
        *lines, rest = (self.partial + chunk).split(b"\n")
        numbered = []
        for line in lines:
            self.lineno += 1
            if self.dropping:  # the end of a line that was too long to keep
                self.dropping = False
                continue
            numbered.append((self.lineno, line))
        self.partial = b"" if self.dropping else rest
        if len(self.partial) > self.line_limit:
            self._note(f"{self.name} line {self.lineno + 1}: longer than {self.line_limit:,} bytes, not streamed")
            self.partial, self.dropping = b"", True
        return numbered

    def _read(self) -> bytes:
        try:
            with sandbox_files.open_regular(self.root, self.name) as f:
                f.seek(self.offset)
                chunk = b"".join(sandbox_files.read_at_most(f, self.per_tick))
        except FileNotFoundError:
            return b""
        except sandbox_files.NotRegular as exc:
            self._note(f"{exc}: not read")
            return b""
        self.offset += len(chunk)
        return chunk

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


@dataclass
class SnapshotWatch:
    """The submission file's content each time it changes (redacted), within `budget`: snapshots are
    stored outputs of the run and count against its output limits (files, size per file, total, by
    apparent size). A change past them is not read, and is counted in one note; the snapshots already
    kept stay, the last of them the latest."""

    root: Path
    name: str
    redactor: Redactor
    budget: Budget
    seen: str = ""
    stamp: tuple = ()
    notes: list[str] = field(default_factory=list)
    skipped: int = 0
    first_skip: str = ""
    _skip_note: int = -1

    def changed(self) -> bytes | None:
        try:
            with sandbox_files.open_regular(self.root, self.name) as f:
                info = os.fstat(f.fileno())
                stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
                if stamp == self.stamp:
                    return None
                self.stamp = stamp
                why = self.budget.refusal(info.st_size)
                if why:
                    self._skip(why)
                    return None
                content = b"".join(sandbox_files.read_at_most(f, info.st_size + 1))
                after = os.fstat(f.fileno())
        except FileNotFoundError:
            return None
        except sandbox_files.NotRegular as exc:
            self._note(f"{exc}: no snapshot kept")
            return None
        if len(content) != info.st_size or (after.st_size, after.st_mtime_ns) != stamp[1:]:
            self.stamp = ()  # changed while it was read (grown, cut, rewritten): read it again at the next tick
            return None
        return self._take(content)

    def give_back(self, content: bytes) -> None:
        """A snapshot that could not be stored after all no longer counts."""
        self.budget.give_back(len(content), 1)

    def _take(self, content: bytes) -> bytes | None:
        digest = hashlib.sha256(content).hexdigest()
        if digest == self.seen:
            return None
        self.seen = digest
        redacted = self.redactor.bytes(content)
        why = self.budget.refusal(len(redacted))
        if why:
            self._skip(why)
            return None
        self.budget.take(len(redacted))
        return redacted

    def _skip(self, why: str) -> None:
        self.skipped += 1
        if self._skip_note < 0:
            self._skip_note = len(self.notes)
            self.notes.append("")
            self.first_skip = why
        self.notes[self._skip_note] = (
            f"{self.name}: {self.skipped:,} change(s) not kept as snapshots, past the snapshots' share of the "
            f"run's output limits (the first: {self.first_skip}); the last snapshot kept stays")

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

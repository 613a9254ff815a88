"""How much of an agent's files the runner may still copy.

Every copy the runner makes of what an agent wrote (the outputs stored at the end, the submission's
snapshots while it runs, a research workspace's snapshots and the copy its eval scores) is held to a
number of files, a size per file and a total, so an agent cannot make the runner fill its own disk
or the site's storage. Sizes are apparent sizes (st_size): a sparse file of 1.5 GiB that holds one
byte counts 1.5 GiB, the length any copy of it takes. The caller leaves out a file the budget
refuses, with the note `refusal` gives, and copies at most the bytes it was charged for.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Budget:
    file_bytes: int
    total_bytes: int
    files: int
    total: int = 0  # bytes taken so far
    count: int = 0  # files taken so far

    @classmethod
    def share_of(cls, limits, divisor: int = 1) -> Budget:
        """A budget of `limits` (runner.host.outputs.Limits), its total and file count divided by `divisor`."""
        return cls(limits.file_bytes, limits.total_bytes // divisor, max(1, limits.files // divisor))

    def refusal(self, size: int) -> str:
        """Why a file of `size` bytes cannot be taken, in words; '' if it can."""
        if size > self.file_bytes:
            return f"{size:,} bytes, over the {self.file_bytes:,}-byte limit per file"
        if self.count >= self.files:
            return f"past the limit of {self.files:,} files"
        if self.total + size > self.total_bytes:
            return f"{size:,} bytes, past the {self.total_bytes:,}-byte total ({self.total:,} already taken)"
        return ""

    def over_file_limit(self, size: int) -> bool:
        """Whether the refusal is the file's own size (smaller files may still fit)."""
        return size > self.file_bytes

    def take(self, size: int) -> None:
        self.total += size
        self.count += 1

    def give_back(self, size: int, count: int) -> None:
        """Undo takes of a copy that was thrown away."""
        self.total -= size
        self.count -= count

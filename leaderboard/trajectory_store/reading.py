"""Reading a stored trajectory: the block index from the database, blocks from the file on demand,
windows, pages, counts, search and single steps; diffs of code steps filled in for the steps shown."""

from __future__ import annotations

import bisect
import functools
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

import orjson
from django.core.files.storage import Storage, default_storage

from leaderboard.importers.base import StepData, unified_diff

T = TypeVar("T")

logger = logging.getLogger(__name__)


@dataclass
class Block:
    first: int
    count: int
    offset: int
    length: int
    kinds: dict[str, int]
    diff_bases: dict[str, int] = field(default_factory=dict)  # code step -> previous version of its file


class StoredStep(StepData, kw_only=True, gc=False):
    """A step as read back: StepData plus what templates ask of a step (its run, its kind's label)."""

    run_id: int = 0

    def get_kind_display(self) -> str:
        return _kind_labels().get(self.kind, self.kind)

    @property
    def text_len(self) -> int:
        return len(self.text)


@functools.cache
def _kind_labels() -> dict[str, str]:
    from leaderboard.models import StepKind  # models import this module's callers; import late

    return dict(StepKind.choices)


def decode_block(raw: bytes, first: int, run_id: int = 0) -> list[StoredStep]:
    steps = []
    for k, line in enumerate(raw.rstrip(b"\n").split(b"\n")):
        obj = orjson.loads(line)
        steps.append(StoredStep(
            index=first + k, kind=obj["kind"], title=obj.get("title", ""), text=obj.get("text", ""),
            data=obj.get("data") or {}, t=obj.get("t"), parent_index=obj.get("parent_index"),
            score=obj.get("score"), run_id=run_id,
        ))
    return steps


def read_block(storage: Storage, name: str, block: Block) -> bytes:
    with storage.open(name, "rb") as f:
        f.seek(block.offset)
        return f.read(block.length)


def read_steps_at(storage: Storage, name: str, blocks: list[Block], indexes: list[int]) -> list[StoredStep]:
    """The steps at these indexes (sorted), reading each block that holds one once."""
    wanted, found = set(indexes), []
    for block in blocks:
        if any(block.first <= i < block.first + block.count for i in wanted):
            found += [s for s in decode_block(read_block(storage, name, block), block.first) if s.index in wanted]
    return found


def outline_of(run) -> dict:
    """A run's outline (tree nodes, score points, code steps of note); {} without a trajectory. One query."""
    from leaderboard.models import Trajectory

    run_id = getattr(run, "pk", run)
    text = Trajectory.objects.filter(run_id=run_id).values_list("outline", flat=True).first()
    return orjson.loads(text) if text else {}


class StoredTrajectory:
    """The read side of one run's trajectory. An empty one stands for a run with no steps."""

    def __init__(self, trajectory=None, blocks: list[Block] | None = None, run_id: int = 0,
                 storage: Storage | None = None) -> None:
        self.trajectory = trajectory
        self.file = trajectory.file if trajectory is not None else ""
        self.blocks = blocks or []
        self.run_id = run_id
        self.storage = storage or default_storage
        self.n_steps = trajectory.n_steps if trajectory is not None else 0
        self.kind_counts: dict[str, int] = dict(trajectory.kind_counts) if trajectory is not None else {}
        self._cache: dict[int, list[StoredStep]] = {}
        self.missing_file = ""  # the storage name of a trajectory file that should be there and is not

    @classmethod
    def of(cls, run) -> StoredTrajectory:
        """Two queries: the trajectory row and its block index."""
        from leaderboard.models import Trajectory

        trajectory = Trajectory.objects.filter(run_id=run.pk).defer("outline").first()
        if trajectory is None:
            return cls(run_id=run.pk)
        if not default_storage.exists(trajectory.file):  # lost from storage: say so, show no steps
            logger.error("run %s: trajectory file %s is missing from storage", run.pk, trajectory.file)
            empty = cls(run_id=run.pk)
            empty.missing_file = trajectory.file
            return empty
        rows = trajectory.blocks.order_by("first").values_list("first", "count", "offset", "length", "kinds",
                                                               "diff_bases")
        return cls(trajectory, [Block(first, count, offset, length, orjson.loads(kinds), orjson.loads(bases))
                                for first, count, offset, length, kinds, bases in rows], run_id=run.pk)

    @classmethod
    def read(cls, run, use: Callable[[StoredTrajectory], T]) -> T:
        """`use(StoredTrajectory.of(run))`, once more on a fresh index if the file went away meanwhile:
        when a runner's run ends, its live trajectory file is replaced by the imported one, and a page
        that read the old index a moment earlier must show the new file, not fail."""
        try:
            return use(cls.of(run))
        except FileNotFoundError:
            return use(cls.of(run))

    @functools.cached_property
    def outline(self) -> dict:
        """Tree nodes, score points and code steps of note; one query, only for pages that draw them."""
        return outline_of(self.run_id) if self.trajectory is not None else {}

    # --- blocks

    def _steps_of(self, number: int) -> list[StoredStep]:
        if number not in self._cache:
            if len(self._cache) > 8:  # a page touches a few blocks; a scan must not hold them all
                self._cache.clear()
            block = self.blocks[number]
            self._cache[number] = decode_block(read_block(self.storage, self.file, block), block.first,
                                               self.run_id)
        return self._cache[number]

    def _block_of(self, index: int) -> int:
        """Number of the block holding step `index` (or the first block after it)."""
        return bisect.bisect_left(self.blocks, index, key=lambda block: block.first + block.count - 1)

    @staticmethod
    def _holds(block: Block, kinds: list[str] | None) -> int:
        return block.count if kinds is None else sum(block.kinds.get(k, 0) for k in kinds)

    # --- queries

    def count(self, kinds: list[str] | None = None) -> int:
        if kinds is None:
            return self.n_steps
        return sum(self.kind_counts.get(k, 0) for k in kinds)

    def steps(self, start: int = 0, kinds: list[str] | None = None) -> Iterator[StoredStep]:
        """Steps with index >= start, in order, optionally only these kinds."""
        for number in range(self._block_of(start), len(self.blocks)):
            if not self._holds(self.blocks[number], kinds):
                continue
            for step in self._steps_of(number):
                if step.index >= start and (kinds is None or step.kind in kinds):
                    yield step

    def steps_before(self, before: int, kinds: list[str] | None = None) -> Iterator[StoredStep]:
        """Steps with index < before, latest first."""
        for number in range(min(self._block_of(before), len(self.blocks) - 1), -1, -1):
            if not self._holds(self.blocks[number], kinds):
                continue
            for step in reversed(self._steps_of(number)):
                if step.index < before and (kinds is None or step.kind in kinds):
                    yield step

    def count_before(self, index: int, kinds: list[str] | None = None) -> int:
        """How many steps (of these kinds) come before `index`: whole blocks from the index, one decoded."""
        number = self._block_of(index)
        total = sum(self._holds(b, kinds) for b in self.blocks[:number])
        if number < len(self.blocks):
            total += sum(1 for s in self._steps_of(number) if s.index < index and (kinds is None or s.kind in kinds))
        return total

    def slice(self, offset: int, limit: int, kinds: list[str] | None = None) -> list[StoredStep]:
        """Steps number offset .. offset+limit-1 of the (filtered) sequence, skipping whole blocks."""
        out: list[StoredStep] = []
        for number, block in enumerate(self.blocks):
            held = self._holds(block, kinds)
            if offset >= held:
                offset -= held
                continue
            for step in self._steps_of(number):
                if kinds is not None and step.kind not in kinds:
                    continue
                if offset:
                    offset -= 1
                    continue
                out.append(step)
                if len(out) >= limit:
                    return out
        return out

    def step(self, index: int | None) -> StoredStep | None:
        if index is None or not 0 <= index < self.n_steps:
            return None
        number = self._block_of(index)
        if number >= len(self.blocks):
            return None
        block = self.blocks[number]
        return self._steps_of(number)[index - block.first]

    def complete(self, steps: list[StoredStep]) -> list[StoredStep]:
        """Fill in the diff of code steps stored without one, against the previous version of their
        file (the writer linked them). Only steps about to be shown pay for this."""
        for step in steps:
            if step.kind != "code" or "diff" in step.data:
                continue
            number = self._block_of(step.index)
            base = self.blocks[number].diff_bases.get(str(step.index)) if number < len(self.blocks) else None
            new = step.data.get("content")
            if not isinstance(new, str):
                continue
            previous = self.step(base)
            old = previous.data.get("content") if previous is not None else None
            # No earlier version: a new file, an empty diff (as the format says).
            step.data["diff"] = unified_diff(old, new, str(step.data.get("file", ""))) if isinstance(old, str) else ""
        return steps

    def search(self, query: str, kinds: list[str] | None = None) -> Iterator[StoredStep]:
        """Steps whose title, text or data (keys and values, as JSON) hold `query`, case-insensitively.

        Each block's bytes are checked before it is decoded, and each line before it is parsed. That
        is sound because no stored line holds a \\u, \\b, \\f or \\/ escape (lines written by orjson, or
        input lines kept only without them: see importers/jsonl.py), so a string's bytes are its UTF-8
        with only '"', '\\' and whitespace controls escaped, which is how the needle is escaped too."""
        needle = query.lower()
        if not needle:
            yield from self.steps(0, kinds)
            return
        escaped = orjson.dumps(needle)[1:-1]
        ascii_only = escaped.isascii()
        for block in self.blocks:
            if not self._holds(block, kinds):
                continue
            raw = read_block(self.storage, self.file, block)
            if ascii_only and escaped not in raw.lower():
                continue
            for k, line in enumerate(raw.rstrip(b"\n").split(b"\n")):
                if ascii_only and escaped not in line.lower():
                    continue
                step = decode_block(line, block.first + k, self.run_id)[0]
                if (kinds is None or step.kind in kinds) and _matches(step, needle, escaped):
                    yield step

    def raw_chunks(self, size: int = 1 << 20) -> Iterator[bytes]:
        """The file's bytes (one JSONL line per step), in chunks."""
        if not self.file:
            return
        with self.storage.open(self.file, "rb") as f:
            while chunk := f.read(size):
                yield chunk


def _matches(step: StoredStep, needle: str, escaped: bytes) -> bool:
    if needle in step.title.lower() or needle in step.text.lower():
        return True
    if not step.data:
        return False
    return escaped.decode() in orjson.dumps(step.data, option=orjson.OPT_NON_STR_KEYS).decode().lower()

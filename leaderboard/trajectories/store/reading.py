"""Reading a stored trajectory: the block index from the database, blocks from the file on demand,
windows, pages, counts, search and single steps; diffs of code steps filled in for the steps shown."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from typing import TypeVar

import orjson
from django.core.files.storage import Storage, default_storage

from leaderboard.trajectories.importers.base import StepData, unified_diff
from leaderboard.trajectories.store import search_index
from leaderboard.trajectories.store.block_index import FIRST_BATCH, MAX_BATCH, Block, BlockIndex

T = TypeVar("T")

logger = logging.getLogger(__name__)


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


def read_block(storage: Storage, name: str, block: Block, f=None) -> bytes:
    """The block's bytes, from `f` when the caller holds the file open (a scan), else one open."""
    if f is not None:
        return _read_at(f, block)
    with storage.open(name, "rb") as opened:
        return _read_at(opened, block)


def _read_at(f, block: Block) -> bytes:
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
    """The read side of one run's trajectory. An empty one stands for a run with no steps.

    It reads the block index row by row as a request needs it (block_index.BlockIndex), never whole."""

    def __init__(self, trajectory=None, run_id: int = 0, storage: Storage | None = None) -> None:
        self.trajectory = trajectory
        self.file = trajectory.file if trajectory is not None else ""
        self.run_id = run_id
        self.storage = storage or default_storage
        self.n_steps = trajectory.n_steps if trajectory is not None else 0
        self.kind_counts: dict[str, int] = dict(trajectory.kind_counts) if trajectory is not None else {}
        self.index = BlockIndex(trajectory.pk if trajectory is not None else None, self.n_steps)
        self._cache: dict[int, list[StoredStep]] = {}  # block's first index -> its decoded steps
        self.bytes_read = 0  # of the trajectory file, by this object (tests and benchmarks count them)
        self.missing_file = ""  # the storage name of a trajectory file that should be there and is not

    @classmethod
    def of(cls, run) -> StoredTrajectory:
        """One query: the trajectory row. Block rows are read as they are needed."""
        from leaderboard.models import Trajectory

        trajectory = Trajectory.objects.filter(run_id=run.pk).defer("outline").first()
        if trajectory is None:
            return cls(run_id=run.pk)
        if not default_storage.exists(trajectory.file):  # lost from storage: say so, show no steps
            logger.error("run %s: trajectory file %s is missing from storage", run.pk, trajectory.file)
            empty = cls(run_id=run.pk)
            empty.missing_file = trajectory.file
            return empty
        return cls(trajectory, run_id=run.pk)

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

    @property
    def blocks(self) -> list[Block]:
        """The whole block index, in order (maintenance and tests: requests read only what they need)."""
        return self.index.all()

    # --- blocks

    def _read(self, block: Block, f=None) -> bytes:
        raw = read_block(self.storage, self.file, block, f)
        self.bytes_read += len(raw)
        return raw

    def _steps_of(self, block: Block) -> list[StoredStep]:
        if block.first not in self._cache:
            if len(self._cache) > 8:  # a page touches a few blocks; a scan must not hold them all
                self._cache.clear()
            self._cache[block.first] = decode_block(self._read(block), block.first, self.run_id)
        return self._cache[block.first]

    # --- queries

    def count(self, kinds: list[str] | None = None) -> int:
        if kinds is None:
            return self.n_steps
        return sum(self.kind_counts.get(k, 0) for k in kinds)

    def steps(self, start: int = 0, kinds: list[str] | None = None) -> Iterator[StoredStep]:
        """Steps with index >= start, in order, optionally only these kinds."""
        for block in self.index.forward(start, kinds):
            for step in self._steps_of(block):
                if step.index >= start and (kinds is None or step.kind in kinds):
                    yield step

    def steps_before(self, before: int, kinds: list[str] | None = None) -> Iterator[StoredStep]:
        """Steps with index < before, latest first."""
        for block in self.index.backward(before, kinds):
            for step in reversed(self._steps_of(block)):
                if step.index < before and (kinds is None or step.kind in kinds):
                    yield step

    def count_before(self, index: int, kinds: list[str] | None = None) -> int:
        """How many steps (of these kinds) come before `index`: the counts kept on its block's row,
        plus the steps before it in that block."""
        if index >= self.n_steps:
            return self.count(kinds)
        if kinds is None or index <= 0:
            return max(index, 0)
        block = self.index.at(index)
        if block is None:
            return 0
        return block.held_before(kinds) + sum(1 for s in self._steps_of(block) if s.index < index and s.kind in kinds)

    def slice(self, offset: int, limit: int, kinds: list[str] | None = None) -> list[StoredStep]:
        """Steps number offset .. offset+limit-1 of the (filtered) sequence."""
        block = self.index.locate(offset, kinds)
        if block is None or limit <= 0:
            return []
        skip, out = offset - block.held_before(kinds), []
        for step in self.steps(block.first, kinds):
            if skip:
                skip -= 1
                continue
            out.append(step)
            if len(out) >= limit:
                break
        return out

    def step(self, index: int | None) -> StoredStep | None:
        if index is None or not 0 <= index < self.n_steps:
            return None
        block = self.index.at(index)
        return self._steps_of(block)[index - block.first] if block is not None else None

    def complete(self, steps: list[StoredStep]) -> list[StoredStep]:
        """Fill in the diff of code steps stored without one, against the previous version of their
        file (the writer linked them). Only steps about to be shown pay for this."""
        for step in steps:
            if step.kind != "code" or "diff" in step.data:
                continue
            block = self.index.at(step.index)
            base = block.diff_bases.get(str(step.index)) if block is not None else None
            new = step.data.get("content")
            if not isinstance(new, str):
                continue
            previous = self.step(base)
            old = previous.data.get("content") if previous is not None else None
            # No earlier version: a new file, an empty diff (as the format says).
            step.data["diff"] = unified_diff(old, new, str(step.data.get("file", ""))) if isinstance(old, str) else ""
        return steps

    def search(self, query: str, kinds: list[str] | None = None, start: int = 0,
               budget: int | None = None) -> Search:
        """Steps from index `start` on whose title, text or data hold `query`, case-insensitively: a
        Search to iterate (see there); `budget` bounds the bytes it reads."""
        return Search(self, query, kinds, start, budget)

    def raw_chunks(self, size: int = 1 << 20) -> Iterator[bytes]:
        """The file's bytes (one JSONL line per step), in chunks."""
        if not self.file:
            return
        with self.storage.open(self.file, "rb") as f:
            while chunk := f.read(size):
                yield chunk


class Search:
    """Iterating it yields the matching steps in order, reading the file once, through one open file.

    Which blocks it reads: with the trajectory's search index (search_index.py) and a needle of 7
    bytes or more, only the candidate blocks; else every block (holding these kinds) from `start` on.
    Iteration stops early once `budget` bytes are read: then `stopped` is True and `resume_at` is the
    step index to search on from (the API hands it out as a cursor). Without a stop, `resume_at` is
    None once the end is reached.

    Each block's bytes are checked before it is decoded, and each line before it is parsed. That is
    sound because no stored line holds a \\u, \\b, \\f or \\/ escape (lines written by orjson, or input
    lines kept only without them: see importers/jsonl.py), so a string's bytes are its UTF-8 with only
    '"', '\\' and whitespace controls escaped, which is how the needle is escaped too."""

    def __init__(self, stored: StoredTrajectory, query: str, kinds: list[str] | None, start: int,
                 budget: int | None) -> None:
        self.stored, self.kinds, self.start, self.budget = stored, kinds, max(start, 0), budget
        self.needle = query.lower()
        self.escaped = orjson.dumps(self.needle)[1:-1]
        self.stopped = False
        self.resume_at: int | None = self.start
        self.used_index = False

    def _blocks(self) -> Iterator[Block]:
        stored = self.stored
        index = search_index.Index.open(stored.storage, stored.file) if stored.file else None
        firsts = index.candidates(self.escaped) if index is not None else None
        if firsts is None:
            yield from stored.index.forward(self.start, self.kinds)
            return
        self.used_index = True
        here = stored.index.at(self.start)
        firsts = firsts[firsts >= (here.first if here else self.start)].tolist()
        k, size = 0, FIRST_BATCH  # rows in growing batches: a common term fills its page in a few blocks
        while k < len(firsts):
            yield from stored.index.with_firsts(firsts[k:k + size], self.kinds)
            k, size = k + size, min(size * 4, MAX_BATCH)

    def __iter__(self) -> Iterator[StoredStep]:
        if not self.stored.file or self.start >= self.stored.n_steps:
            self.resume_at = None
            return
        if not self.needle:
            yield from self.stored.steps(self.start, self.kinds)
            self.resume_at = None
            return
        with self.stored.storage.open(self.stored.file, "rb") as f:
            for block in self._blocks():
                if self.budget is not None and self.stored.bytes_read >= self.budget:
                    self.stopped, self.resume_at = True, max(block.first, self.start)
                    return
                yield from self._hits(self.stored._read(block, f), block)
                self.resume_at = block.first + block.count
        self.resume_at = None

    def _hits(self, raw: bytes, block: Block) -> Iterator[StoredStep]:
        # The bytes tell only for an ASCII needle, and only where no character lower-cases into ASCII.
        escaped = self.escaped
        ascii_only = escaped.isascii() and not search_index.has_odd_characters(raw)
        if ascii_only and escaped not in raw.lower():
            return
        for k, line in enumerate(raw.rstrip(b"\n").split(b"\n")):
            if block.first + k < self.start or (ascii_only and escaped not in line.lower()):
                continue
            step = decode_block(line, block.first + k, self.stored.run_id)[0]
            if (self.kinds is None or step.kind in self.kinds) and _matches(step, self.needle, escaped):
                yield step


def _matches(step: StoredStep, needle: str, escaped: bytes) -> bool:
    if needle in step.title.lower() or needle in step.text.lower():
        return True
    if not step.data:
        return False
    return escaped.decode() in orjson.dumps(step.data, option=orjson.OPT_NON_STR_KEYS).decode().lower()

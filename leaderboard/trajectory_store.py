"""Where a run's steps live: one JSONL file per trajectory in artifact storage, indexed by blocks.

    write_steps(run, steps)                 # the importers' steps -> file + index, in bounded memory
    stored = StoredTrajectory.of(run)       # read side: windows, pages, search, single steps
    for step in stored.steps(start=0, kinds=["code"]): ...

The file holds one line per step in Medalboard's own JSONL step format (docs/trajectory-format.md),
so the trajectory download is the file itself behind a header line. The database holds a
`Trajectory` row (file name, kind counts, outline) and one `StepBlock` row per block of up to
BLOCK_STEPS consecutive steps (first index, count, byte range, kinds in it). A window of steps
reads and decodes one or two blocks; a filter by kind skips the blocks that hold none.

Why not one database row per step: writing 100 MB of step text into SQLite costs about 3x parsing
it with orjson, and 100,000 rows cost about 2x more, while appending it to a file costs 0.5x
(benchmarks/ingest.py measures the whole import against the parse).

The outline (tree-search nodes, score points, which code step is the best or last) is built while
the file is written, so the tree, the score chart and the compare page never scan the trajectory.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import queue
import tempfile
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from django.core.files import File
from django.core.files.storage import Storage, default_storage
from django.db import transaction

from leaderboard.importers.base import StepData, unified_diff

logger = logging.getLogger(__name__)

BLOCK_STEPS = 256
BLOCK_BYTES = 1 << 20  # a block closes early once it holds this much, so one huge step stays alone-ish
OUTLINE_LIMIT = 5000
SAVE_BLOCKS = 64  # block rows are inserted this many at a time while the file is written
MAX_TRACKED_FILES = 10_000  # distinct code file names whose versions are linked for diffs
STEP_KEYS = ("index", "kind", "t", "title", "text", "data", "score", "parent_index")


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


def step_json(step: StepData) -> bytes:
    """One step as a line of the file (no newline): the JSONL step format, empty fields left out."""
    obj = {"index": step.index, "kind": step.kind}
    if step.t is not None:
        obj["t"] = step.t
    if step.title:
        obj["title"] = step.title
    if step.text:
        obj["text"] = step.text
    if step.data:
        obj["data"] = step.data
    if step.score is not None:
        obj["score"] = step.score
    if step.parent_index is not None:
        obj["parent_index"] = step.parent_index
    try:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits and other rarities
        import json

        return json.dumps(obj, default=str, ensure_ascii=False).encode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------------------------
# Writing


@dataclass
class Block:
    first: int
    count: int
    offset: int
    length: int
    kinds: dict[str, int]
    diff_bases: dict[str, int] = field(default_factory=dict)  # code step -> previous version of its file


@dataclass
class Outline:
    """Built step by step while writing; bounded by OUTLINE_LIMIT whatever the trajectory's length."""

    nodes: dict[int, dict] = field(default_factory=dict)  # steps with a parent
    parents: set[int] = field(default_factory=set)
    scores: list[list] = field(default_factory=list)
    truncated: bool = False
    last_code: int | None = None
    flagged_code: int | None = None
    max_code: tuple[float, int] | None = None
    min_code: tuple[float, int] | None = None

    def add(self, step: StepData) -> None:
        if step.score is not None:
            if len(self.scores) < OUTLINE_LIMIT:
                self.scores.append([step.index, step.t, step.score])
            else:
                self.truncated = True
        if step.parent_index is not None:
            if len(self.nodes) < OUTLINE_LIMIT:
                self.nodes[step.index] = node(step)
                self.parents.add(step.parent_index)
            else:
                self.truncated = True
        if step.kind == "code":
            self._add_code(step)

    def _add_code(self, step: StepData) -> None:
        self.last_code = step.index
        if step.data.get("is_best") is True:
            self.flagged_code = step.index
        if step.score is not None:  # ties go to the later step, as "-index" ordering did
            if self.max_code is None or step.score >= self.max_code[0]:
                self.max_code = (step.score, step.index)
            if self.min_code is None or step.score <= self.min_code[0]:
                self.min_code = (step.score, step.index)

    def as_json(self, roots: Iterable[StepData]) -> dict:
        nodes = dict(self.nodes)
        for step in roots:
            nodes.setdefault(step.index, node(step))
        return {
            "tree": [nodes[i] for i in sorted(nodes)][:OUTLINE_LIMIT],
            "scores": self.scores,
            "truncated": self.truncated or len(nodes) > OUTLINE_LIMIT,
            "code": {"last": self.last_code, "flagged": self.flagged_code,
                     "max": self.max_code and self.max_code[1], "min": self.min_code and self.min_code[1]},
        }

    def missing_roots(self) -> list[int]:
        return sorted(self.parents - self.nodes.keys())


def node(step: StepData) -> dict:
    data = step.data or {}
    return {"index": step.index, "parent_index": step.parent_index, "kind": step.kind, "title": step.title,
            "score": step.score, "buggy": data.get("buggy") is True, "is_best": data.get("is_best") is True}


class BackgroundWrites:
    """Writes chunks to a file from a second thread. Writing a new file costs the kernel about as much
    as parsing it costs us (page cache allocation); this way the two overlap on a second core. The
    queue is bounded, so at most `depth` blocks wait in memory."""

    def __init__(self, f, depth: int = 4) -> None:
        self.f = f
        self.queue: queue.Queue[bytes | None] = queue.Queue(depth)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="trajectory-writer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (chunk := self.queue.get()) is not None:
            if self.error is None:  # after an error keep draining, so the producer never blocks
                try:
                    self.f.write(chunk)
                except BaseException as exc:  # noqa: BLE001 - handed to the producer thread
                    self.error = exc

    def write(self, chunk: bytes) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(chunk)

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()
        if self.error is not None:
            raise self.error
        self.f.flush()


class Writer:
    """Appends steps to a binary file in blocks; collects the block index, kind counts and outline.

    Per step it only keeps the step; the bookkeeping runs once per block over the whole block, which
    is what keeps an import of 100,000 steps near the cost of parsing them (benchmarks/ingest.py)."""

    def __init__(self, f, on_blocks: Callable[[list[Block]], None] | None = None) -> None:
        self.f = BackgroundWrites(f)
        self.on_blocks = on_blocks  # called with each SAVE_BLOCKS blocks; without it, self.blocks keeps all
        self.blocks: list[Block] = []
        self.kind_counts: Counter[str] = Counter()
        self.outline = Outline()
        self.count = 0
        self._pending: list[StepData] = []
        self._size = 0
        self._offset = 0
        self._files: dict[str, int] = {}  # file name -> index of its latest code step

    def add(self, step: StepData) -> None:
        self.add_all((step,))

    def add_all(self, steps: Iterable[StepData]) -> None:
        """add() for each step, in one loop: this is the import's hot path."""
        pending, size, block_steps, block_bytes = self._pending, self._size, BLOCK_STEPS, BLOCK_BYTES
        for step in steps:
            if step.raw is None:
                step.raw = step_json(step)  # the line the store keeps (a raw step's is its input line)
            pending.append(step)
            size += len(step.raw)
            if len(pending) >= block_steps or size >= block_bytes:
                self._pending = pending
                self._flush()
                pending, size = self._pending, 0
        self._pending, self._size = pending, size

    def _flush(self) -> None:
        steps = self._pending
        if not steps:
            return
        lines = [s.raw for s in steps]
        lines.append(b"")
        chunk = b"\n".join(lines)
        self.f.write(chunk)
        kinds = Counter(s.kind for s in steps)
        bases: dict[str, int] = {}
        for step in [s for s in steps if s.score is not None or s.parent_index is not None or s.kind == "code"]:
            self.outline.add(step)
            if step.kind == "code":
                self._track_file(step, bases)
        self.blocks.append(Block(self.count, len(steps), self._offset, len(chunk), dict(kinds), bases))
        if self.on_blocks is not None and len(self.blocks) >= SAVE_BLOCKS:
            self._save_blocks()
        self.kind_counts.update(kinds)
        self.count += len(steps)
        self._offset += len(chunk)
        self._pending, self._size = [], 0

    def _track_file(self, step: StepData, bases: dict[str, int]) -> None:
        """A code step without a diff gets one when read, against the previous version of its file."""
        name = step.data.get("file")
        if type(name) is not str or type(step.data.get("content")) is not str:
            return
        if "diff" not in step.data and name in self._files:
            bases[str(step.index)] = self._files[name]
        if name in self._files or len(self._files) < MAX_TRACKED_FILES:
            self._files[name] = step.index

    def _save_blocks(self) -> None:
        self.on_blocks(self.blocks)
        self.blocks = []

    def abort(self) -> None:
        """After an error: stop the writing thread, save and write nothing more (the file is removed)."""
        with contextlib.suppress(Exception):
            self.f.close()

    def finish(self) -> None:
        """Write what is left and wait for the writes; raises a write error. Call it exactly once."""
        try:
            self._flush()
        finally:
            self.f.close()
        if self.on_blocks is not None and self.blocks:
            self._save_blocks()


@contextlib.contextmanager
def writable(storage: Storage, name: str) -> Iterator:
    """A binary file to write `name` into: the storage's own file where it has local paths, else a
    temporary file saved into the storage on success."""
    try:
        path = Path(storage.path(name))
    except NotImplementedError:
        path = None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "xb") as f:
            yield f
        return
    with tempfile.TemporaryFile() as f:
        yield f
        f.seek(0)
        saved = storage.save(name, File(f))
        if saved != name:
            storage.delete(saved)
            raise OSError(f"storage renamed {name} to {saved}")


def new_file_name(run_id: int) -> str:
    return f"trajectories/run-{run_id}/{uuid.uuid4().hex}.jsonl"


def write_file(storage: Storage, name: str, steps: Iterable[StepData],
               on_blocks: Callable[[list[Block]], None] | None = None) -> Writer:
    """Write the steps to storage under `name`; on any error the partial file is removed."""
    try:
        with writable(storage, name) as f:
            writer = Writer(f, on_blocks)
            try:
                writer.add_all(steps)
            except BaseException:
                writer.abort()
                raise
            writer.finish()
    except BaseException:
        with contextlib.suppress(OSError):
            storage.delete(name)
        raise
    return writer


def write_trajectory(storage: Storage, run_id: int, steps: Iterable[StepData], trajectory_model, block_model):
    """The file, its Trajectory row and its StepBlock rows, in one transaction (models passed in, so
    migrations can use this with their historical models). Block rows are saved while the file is
    written, so memory stays flat however many blocks there are. On any error the file is removed."""
    name = new_file_name(run_id)

    def save_blocks(blocks: list[Block]) -> None:
        block_model.objects.bulk_create(
            [block_model(trajectory=trajectory, first=b.first, count=b.count, offset=b.offset, length=b.length,
                         kinds=orjson.dumps(b.kinds).decode(), diff_bases=orjson.dumps(b.diff_bases).decode())
             for b in blocks],
            batch_size=500,
        )

    try:
        with transaction.atomic():
            trajectory = trajectory_model.objects.create(run_id=run_id, file=name)
            writer = write_file(storage, name, steps, save_blocks)
            missing = writer.outline.missing_roots()
            blocks = [Block(*row, {}) for row in block_model.objects.filter(
                trajectory=trajectory, first__lte=max(missing, default=-1)
            ).order_by("first").values_list("first", "count", "offset", "length")]
            trajectory.n_steps, trajectory.kind_counts = writer.count, dict(writer.kind_counts)
            trajectory.outline = orjson.dumps(writer.outline.as_json(read_steps_at(storage, name, blocks, missing))
                                              ).decode()
            trajectory.save(update_fields=["n_steps", "kind_counts", "outline"])
    except BaseException:
        delete_file(storage, name)
        raise
    return trajectory


def write_steps(run, steps: Iterable[StepData]):
    """Replace the run's stored trajectory with these steps; returns its Trajectory row. Call inside
    a transaction: the rows roll back with it, and a caller whose transaction fails later deletes the
    returned row's `file`."""
    from leaderboard.models import StepBlock, Trajectory

    Trajectory.objects.filter(run=run).delete()  # the old file goes once this commits (models signal)
    return write_trajectory(default_storage, run.pk, steps, Trajectory, StepBlock)


# ---------------------------------------------------------------------------------------------
# Reading


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


class _LazyJson:
    """A JSON object decoded on first use (most blocks' diff links are never needed)."""

    __slots__ = ("text", "value")

    def __init__(self, text: str) -> None:
        self.text, self.value = text, None

    def get(self, key, default=None):
        if self.value is None:
            self.value = orjson.loads(self.text)
        return self.value.get(key, default)


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
        return cls(trajectory, [Block(first, count, offset, length, orjson.loads(kinds), _LazyJson(bases))
                                for first, count, offset, length, kinds, bases in rows], run_id=run.pk)

    @functools.cached_property
    def outline(self) -> dict:
        """Tree nodes, score points and code steps of note; one query, only for pages that draw them."""
        if self.trajectory is None:
            return {}

        return outline_of(self.run_id)

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
        lo, hi = 0, len(self.blocks)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.blocks[mid].first + self.blocks[mid].count <= index:
                lo = mid + 1
            else:
                hi = mid
        return lo

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

        Each block's bytes are checked before it is decoded, and each line before it is parsed:
        the file is orjson's output, so a string's bytes are its UTF-8 with only '"', '\\' and
        control characters escaped, which is how the needle is escaped too."""
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


def delete_file(storage: Storage, name: str) -> None:
    with contextlib.suppress(OSError):
        storage.delete(name)


"""Writing a trajectory: its steps appended to one file in blocks by a second thread, the block index
saved while the file grows, and the outline (tree nodes, score points, code steps of note) built on
the way. Memory stays flat however long the trajectory is."""

from __future__ import annotations

import contextlib
import queue
import tempfile
import threading
import uuid
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate, islice
from operator import attrgetter
from pathlib import Path

import orjson
from django.core.files import File
from django.core.files.storage import Storage, default_storage
from django.db import transaction

from leaderboard.search.index import index_steps, index_trajectory
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.importers.jsonl import step_json
from leaderboard.trajectories.store import search_index
from leaderboard.trajectories.store.block_index import Block, kind_bits
from leaderboard.trajectories.store.reading import StoredTrajectory, read_steps_at

BLOCK_STEPS = 256
BLOCK_BYTES = 1 << 20  # a block closes early once it holds this much, so one huge step stays alone-ish
OUTLINE_LIMIT = 5000
WRITE_BATCH = 4  # blocks handed to the writer thread at a time
SAVE_BLOCKS = 64  # block rows are inserted this many at a time while the file is written
MAX_TRACKED_FILES = 10_000  # distinct code file names whose versions are linked for diffs
_KIND = attrgetter("kind")


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

    def add_block(self, steps: list[StepData]) -> list[StepData]:
        """A block's steps, one comprehension per part of the outline (each part in step order); returns
        the block's code steps."""
        scores = [[s.index, s.t, s.score] for s in steps if s.score is not None]
        if scores:
            room = max(OUTLINE_LIMIT - len(self.scores), 0)
            self.scores += scores[:room]
            self.truncated = self.truncated or len(scores) > room
        for step in [s for s in steps if s.parent_index is not None or (s.data and is_tree_node(s))]:
            if len(self.nodes) < OUTLINE_LIMIT:
                self.nodes[step.index] = node(step)
                if step.parent_index is not None:
                    self.parents.add(step.parent_index)
            else:
                self.truncated = True
        code = [s for s in steps if s.kind == "code"]
        for step in code:
            self._add_code(step)
        return code

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


def is_tree_node(step: StepData) -> bool:
    """A root of a search tree (an AIDE draft) that no other step may point at is still a node."""
    return isinstance(step.data, dict) and step.data.get("tree_node") is True


def node(step: StepData) -> dict:
    """A tree node: its score is the step's, or the node's own metric (`node_score`) that a tree-search
    importer gives its first step; `maximize` says which way the metric is better (None: unknown)."""
    data = step.data or {}
    score = step.score if step.score is not None else data.get("node_score")
    return {"index": step.index, "parent_index": step.parent_index, "kind": step.kind, "title": step.title,
            "score": score if isinstance(score, int | float) else None, "buggy": data.get("buggy") is True,
            "is_best": data.get("is_best") is True,
            "maximize": data.get("maximize") if isinstance(data.get("maximize"), bool) else None}


class BackgroundWrites:
    """Writes chunks to a file from a second thread, and adds each to the search index there. Writing
    a new file costs the kernel about as much as parsing it costs us (page cache allocation), and the
    index is built by NumPy, which lets go of the GIL; this way they overlap with the parse on a
    second core. Blocks are handed over WRITE_BATCH at a time (each hand-over wakes the thread and
    passes the GIL back and forth; one per block cost more than the overlap saved on a loaded
    machine). The queue is bounded, so at most `depth` batches wait in memory."""

    def __init__(self, f, depth: int = 4, grams: search_index.Builder | None = None, batch: int | None = None) -> None:
        self.f = f
        self.grams = grams
        self.queue: queue.Queue[list[tuple[int, bytes]] | None] = queue.Queue(depth)
        self.batch, self._batch = batch or WRITE_BATCH, []  # blocks waiting to be handed over
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="trajectory-writer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (items := self.queue.get()) is not None:
            if self.error is None:  # after an error keep draining, so the producer never blocks
                try:
                    for first, chunk in items:
                        self.f.write(chunk)
                        if self.grams is not None:
                            self.grams.add(first, chunk)
                except BaseException as exc:  # noqa: BLE001 - handed to the producer thread
                    self.error = exc

    def write(self, first: int, chunk: bytes) -> None:
        if self.error is not None:
            raise self.error
        self._batch.append((first, chunk))
        if len(self._batch) >= self.batch:
            self.queue.put(self._batch)
            self._batch = []

    def close(self) -> None:
        if self._batch:
            self.queue.put(self._batch)
            self._batch = []
        self.queue.put(None)
        self.thread.join()
        if self.error is not None:
            raise self.error
        self.f.flush()


class DirectWrites:
    """Writes in the caller's thread and flushes each chunk: for a live trajectory, whose blocks are
    read while the file grows."""

    def __init__(self, f) -> None:
        self.f = f

    def write(self, first: int, chunk: bytes) -> None:
        self.f.write(chunk)
        self.f.flush()

    def close(self) -> None:
        self.f.flush()


class Writer:
    """Appends steps to a binary file in blocks; collects the block index, kind counts and outline.

    Per step it only keeps the step; the bookkeeping runs once per block over the whole block, which
    is what keeps an import of 100,000 steps near the cost of parsing them (benchmarks/ingest.py)."""

    def __init__(self, f, on_blocks: Callable[[list[Block]], None] | None = None, background: bool = True) -> None:
        # A live trajectory (written in the caller's thread) grows while it is read: no search index.
        self.grams = search_index.Builder() if background else None
        self.f = BackgroundWrites(f, grams=self.grams) if background else DirectWrites(f)
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
        """add() for each step: this is the import's hot path. Steps are taken a block's worth at a
        time (islice), so the per-step work is a few list comprehensions, not a Python loop body."""
        steps = iter(steps)
        while batch := list(islice(steps, BLOCK_STEPS - len(self._pending))):
            raws = [s.raw for s in batch]
            if None in raws:  # the line the store keeps (a raw step's is its input line)
                for i, step in enumerate(batch):
                    if step.raw is None:
                        step.raw = raws[i] = step_json(step)
            size = self._size + sum(map(len, raws))
            if size < BLOCK_BYTES:
                self._pending += batch
                self._size = size
                if len(self._pending) >= BLOCK_STEPS:
                    self._flush()
                continue
            # The block ends at the first step that takes it to BLOCK_BYTES; the rest start the next.
            sizes = list(accumulate(map(len, raws), initial=self._size))
            while batch:
                end = bisect_left(sizes, BLOCK_BYTES, lo=1)
                if end == len(sizes):  # what is left does not fill a block
                    self._pending += batch
                    self._size = sizes[-1]
                    if len(self._pending) >= BLOCK_STEPS:
                        self._flush()
                    break
                self._pending += batch[:end]
                self._flush()
                batch = batch[end:]
                sizes = [size - sizes[end] for size in sizes[end:]]

    def close_block(self) -> None:
        """End the current block now (a live trajectory makes its newest steps readable at once)."""
        self._flush()

    def _flush(self) -> None:
        steps = self._pending
        if not steps:
            return
        lines = [s.raw for s in steps]
        lines.append(b"")
        chunk = b"\n".join(lines)
        self.f.write(self.count, chunk)
        kinds = Counter(map(_KIND, steps))
        bases: dict[str, int] = {}
        for step in self.outline.add_block(steps):
            self._track_file(step, bases)
        self.blocks.append(Block(self.count, len(steps), self._offset, len(chunk), dict(kinds), bases,
                                 dict(self.kind_counts)))
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
    """Write the steps to storage under `name`, and their search index beside it. On an error the
    caller removes the partial files (delete_file)."""
    with writable(storage, name) as f:
        writer = Writer(f, on_blocks)
        try:
            writer.add_all(steps)
        except BaseException:
            writer.abort()
            raise
        writer.finish()
    writer.grams.save(storage, name)
    return writer


def write_trajectory(storage: Storage, run_id: int, steps: Iterable[StepData], trajectory_model, block_model):
    """The file, its Trajectory row and its StepBlock rows, in one transaction (models passed in, so
    migrations can use this with their historical models). Block rows are saved while the file is
    written, so memory stays flat however many blocks there are. On any error the file is removed."""
    name = new_file_name(run_id)

    try:
        with transaction.atomic():
            trajectory = trajectory_model.objects.create(run_id=run_id, file=name)
            writer = write_file(storage, name, steps, lambda blocks: save_block_rows(block_model, trajectory, blocks))
            save_summary(storage, trajectory, writer, block_model)
    except BaseException:
        delete_file(storage, name)
        raise
    return trajectory


def save_block_rows(block_model, trajectory, blocks: list[Block]) -> None:
    # Migration 0002 writes through its historical model, which predates the kind columns.
    has_kind_columns = any(f.name == "kind_mask" for f in block_model._meta.get_fields())
    block_model.objects.bulk_create(
        [block_model(trajectory=trajectory, first=b.first, count=b.count, offset=b.offset, length=b.length,
                     kinds=orjson.dumps(b.kinds).decode(), diff_bases=orjson.dumps(b.diff_bases).decode(),
                     **({"kind_mask": kind_bits(b.kinds), "kinds_before": orjson.dumps(b.before).decode()}
                        if has_kind_columns else {}))
         for b in blocks],
        batch_size=500,
    )


def save_summary(storage: Storage, trajectory, writer: Writer, block_model) -> None:
    """The Trajectory row's step count, kind counts and outline, from what the writer has written."""
    name = trajectory.file
    missing = writer.outline.missing_roots()
    blocks = [Block(*row, {}) for row in block_model.objects.filter(
        trajectory=trajectory, first__lte=max(missing, default=-1)
    ).order_by("first").values_list("first", "count", "offset", "length")]
    trajectory.n_steps, trajectory.kind_counts = writer.count, dict(writer.kind_counts)
    trajectory.outline = orjson.dumps(writer.outline.as_json(read_steps_at(storage, name, blocks, missing))).decode()
    trajectory.save(update_fields=["n_steps", "kind_counts", "outline"])


class LiveTrajectory:
    """A trajectory written while its run works. Each append() stores the new steps as one more block
    and refreshes the counts and the outline in one transaction, so the replay page shows the steps so
    far. It appends to the file in place, so it needs storage with local paths (the default; a shared
    volume across runner hosts). `fence` runs first inside each transaction: a runner that lost its
    claim on the run raises there and writes nothing."""

    def __init__(self, run, storage: Storage | None = None) -> None:
        from leaderboard.models import StepBlock, Trajectory

        self.storage, self.run, self.block_model = storage or default_storage, run, StepBlock
        name = new_file_name(run.pk)
        path = Path(self.storage.path(name))
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(path, "xb")  # noqa: SIM115 - closed by close()
        self.writer = Writer(self.file, background=False)
        with transaction.atomic():
            Trajectory.objects.filter(run=run).delete()
            self.trajectory = Trajectory.objects.create(run=run, file=name)

    @property
    def count(self) -> int:
        return self.writer.count

    def append(self, steps: list[StepData], fence: Callable[[], None] | None = None) -> None:
        if not steps:
            return
        from leaderboard.trajectories import step_size  # it imports the models, which import this package's callers

        step_size.bound_live(steps)
        first = self.writer.count
        self.writer.add_all(steps)
        self.writer.close_block()
        blocks, self.writer.blocks = self.writer.blocks, []
        with transaction.atomic():
            if fence is not None:
                fence()
            save_block_rows(self.block_model, self.trajectory, blocks)
            index_steps(self.trajectory, steps, first)
            save_summary(self.storage, self.trajectory, self.writer, self.block_model)
            type(self.run).objects.filter(pk=self.run.pk).update(n_steps=self.writer.count)

    def close(self) -> None:
        self.file.close()


def write_steps(run, steps: Iterable[StepData]):
    """Replace the run's stored trajectory with these steps; returns its Trajectory row. Call inside
    a transaction: the rows roll back with it, and a caller whose transaction fails later deletes the
    returned row's `file`."""
    from leaderboard.models import StepBlock, Trajectory

    Trajectory.objects.filter(run=run).delete()  # the old file goes once this commits (models signal)
    trajectory = write_trajectory(default_storage, run.pk, steps, Trajectory, StepBlock)
    # the steps as stored (their bounds applied), read back from the file just written; the old steps'
    # search rows went with the old row
    index_trajectory(trajectory, StoredTrajectory(trajectory, run_id=trajectory.run_id).steps())
    return trajectory


def delete_file(storage: Storage, name: str) -> None:
    """A trajectory file and its search index."""
    with contextlib.suppress(OSError):
        storage.delete(name)
    search_index.delete(storage, name)

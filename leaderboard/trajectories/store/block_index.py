"""The block index of one trajectory (its StepBlock rows), read from the database as a request needs it.

A request never loads the whole index: the block holding a step is one indexed query on
(trajectory, first); walking forward or backward fetches rows in small, growing batches; a filter by
kind is a bit test in the database (`kind_mask`), so blocks without those kinds are never fetched;
and the cumulative kind counts stored on each row (`kinds_before`) make "how many steps of these
kinds come before step i" and "where is the n-th step of these kinds" a few single-row queries.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import orjson
from django.db.models import F

# Bit of each kind in StepBlock.kind_mask. Append only: stored masks depend on these positions.
KINDS = ("plan", "action", "observation", "code", "command", "score", "llm", "submission", "error", "message")
OTHER_KIND_BIT = 1 << 30  # a kind this list does not know (never written by the importers)
FIRST_BATCH, MAX_BATCH = 4, 256  # rows per query while walking: a window needs one or two blocks


def kind_bits(kinds: Iterable[str]) -> int:
    bits = 0
    for kind in kinds:
        bits |= 1 << KINDS.index(kind) if kind in KINDS else OTHER_KIND_BIT
    return bits


@dataclass
class Block:
    first: int
    count: int
    offset: int
    length: int
    kinds: dict[str, int]
    diff_bases: dict[str, int] = field(default_factory=dict)  # code step -> previous version of its file
    before: dict[str, int] = field(default_factory=dict)  # steps of each kind in the blocks before this one

    def holds(self, kinds: list[str] | None) -> int:
        return self.count if kinds is None else sum(self.kinds.get(k, 0) for k in kinds)

    def held_before(self, kinds: list[str] | None) -> int:
        return self.first if kinds is None else sum(self.before.get(k, 0) for k in kinds)


COLUMNS = ("first", "count", "offset", "length", "kinds", "diff_bases", "kinds_before")


class Replaced(FileNotFoundError):
    """The trajectory's rows went away while a request read it: a runner's live trajectory was
    replaced by the imported one. StoredTrajectory.read tries once more on the new one."""


class BlockIndex:
    """The StepBlock rows of one trajectory, fetched on demand and remembered for the request."""

    def __init__(self, trajectory_id: int | None, n_steps: int) -> None:
        self.trajectory_id = trajectory_id
        self.n_steps = n_steps if trajectory_id is not None else 0
        self.rows_fetched = 0  # how many rows this request has read (tests and benchmarks count them)
        self._known: dict[int, Block] = {}
        self._firsts: list[int] = []  # sorted keys of _known

    # --- fetching

    def _query(self, kinds: list[str] | None = None):
        from leaderboard.models import StepBlock  # models import this package's callers; import late

        rows = StepBlock.objects.filter(trajectory_id=self.trajectory_id)
        if kinds is not None:
            rows = rows.annotate(held=F("kind_mask").bitand(kind_bits(kinds))).filter(held__gt=0)
        return rows

    def _fetch(self, rows) -> list[Block]:
        blocks = []
        for first, count, offset, length, kinds, bases, before in rows.values_list(*COLUMNS):
            block = self._known.get(first)
            if block is None:
                block = Block(first, count, offset, length, orjson.loads(kinds), orjson.loads(bases),
                              orjson.loads(before))
                self._known[first] = block
                bisect.insort(self._firsts, first)
            blocks.append(block)
        self.rows_fetched += len(blocks)
        return blocks

    def all(self) -> list[Block]:
        """Every block, in order: the whole index (maintenance and tests; requests never need it)."""
        return self._fetch(self._query().order_by("first")) if self.trajectory_id is not None else []

    def with_firsts(self, firsts: list[int], kinds: list[str] | None = None) -> list[Block]:
        """The blocks that start at these step indexes (and hold these kinds), in order."""
        if not firsts or self.trajectory_id is None:
            return []
        return self._fetch(self._query(kinds).filter(first__in=firsts).order_by("first"))

    # --- lookups

    def at(self, index: int) -> Block | None:
        """The block holding step `index`: from the rows already read, else one indexed query."""
        if not 0 <= index < self.n_steps:
            return None
        k = bisect.bisect_right(self._firsts, index) - 1
        if k >= 0 and index < (block := self._known[self._firsts[k]]).first + block.count:
            return block
        found = self._fetch(self._query().filter(first__lte=index).order_by("-first")[:1])
        if not found:
            raise Replaced(f"trajectory {self.trajectory_id} has no block for step {index}")
        return found[0] if index < found[0].first + found[0].count else None

    def forward(self, start: int, kinds: list[str] | None = None) -> Iterator[Block]:
        """Blocks holding steps >= start (and of these kinds), in order."""
        if self.trajectory_id is None or start >= self.n_steps:
            return
        here = self.at(start) if start > 0 else None  # (step 0 starts the first block)
        yield from self._walk(kinds, "first__gte", here.first if here else max(start, 0), "first")

    def backward(self, before: int, kinds: list[str] | None = None) -> Iterator[Block]:
        """Blocks holding steps < before (and of these kinds), latest first."""
        if self.trajectory_id is not None and before > 0:
            yield from self._walk(kinds, "first__lt", before, "-first")

    def _walk(self, kinds: list[str] | None, bound: str, value: int, order: str) -> Iterator[Block]:
        """Rows past `value` in `order`, in batches that grow: a window reads one, a scan few."""
        size = FIRST_BATCH
        while True:
            batch = self._fetch(self._query(kinds).filter(**{bound: value}).order_by(order)[:size])
            if not batch and kinds is None and size == FIRST_BATCH:
                raise Replaced(f"trajectory {self.trajectory_id} has no block with {bound} {value}")
            yield from batch
            if len(batch) < size:
                return
            value, size = batch[-1].first + (order == "first"), min(size * 4, MAX_BATCH)

    def locate(self, offset: int, kinds: list[str] | None = None) -> Block | None:
        """The block holding the offset-th step (0-based) of these kinds: a binary search over the
        steps' indexes with one single-row query per probe (about log2 of the number of blocks)."""
        if kinds is None:  # the offset-th step is step `offset`
            return self.at(offset)
        lo, hi = 0, self.n_steps
        while lo < hi:
            block = self.at((lo + hi) // 2)
            if block is None:
                return None
            before = block.held_before(kinds)
            if offset < before:
                hi = block.first
            elif offset >= before + block.holds(kinds):
                lo = block.first + block.count
            else:
                return block
        return None

"""The search index of a trajectory: which blocks may hold a piece of text, stored beside its file.

Search is a case-insensitive substring match on the stored lines (StoredTrajectory.search), so the
index must never miss a block that holds the needle, and may name a few that do not (each candidate
block is then checked exactly). It maps 4-byte grams to the blocks holding them, but only the grams
that start at a block offset divisible by 4 (one machine word each: building it is a few vectorised
passes over the block's bytes, run on the writer's thread while the importer parses). An occurrence
of a needle of 7 bytes or more covers at least one such aligned gram, and its alignment is one of 4
shifts, so a block can hold the needle only if, for some shift s, it holds every gram the needle
has at offsets s, s+4, ... . A gram is known by a 16-bit hash of its bytes' low 5 bits, which folds
ASCII case (and merges other grams: more candidates, never fewer). Shorter needles cannot use the index and fall
back to a bounded scan (see reading.py).

Only two characters lower-case into ASCII (U+0130 and U+212A), so a needle's ASCII bytes are the
stored bytes of the text except where those occur: a block holding either is always a candidate.

File layout after an 8-byte magic, little-endian uint32: n_blocks, hash bits b, row bytes r,
n_always; each block's `first` step index; the numbers of the blocks that are always candidates;
then 2^b rows of r bytes, bit k of row h set when block k holds a gram hashing to h.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from django.core.files.base import ContentFile
from django.core.files.storage import Storage

SUFFIX = ".grams"
MAGIC = b"MBGRAM2\n"
GRAM = 4  # bytes per gram, and the stride of the offsets indexed
MIN_NEEDLE = 2 * GRAM - 1  # the shortest needle that always covers an aligned gram
HASH_BITS = 16
MULTIPLIER = np.uint32(0x9E3779B1)  # Fibonacci hashing: the high bits of the product spread well
FOLDED = np.uint32(0x1F1F1F1F)  # the low 5 bits of each byte: ASCII case folded
ODD_CHARACTERS = ("\u0130".encode(), "\u212a".encode())  # lower-case into ASCII


def has_odd_characters(raw: bytes) -> bool:
    # A lead byte first: one memchr pass, where the two-byte search is a much slower one.
    return any(odd[:1] in raw and odd in raw for odd in ODD_CHARACTERS)


def index_name(trajectory_file: str) -> str:
    return trajectory_file + SUFFIX


def gram_hashes(words: np.ndarray, bits: int = HASH_BITS) -> np.ndarray:
    """Little-endian 4-byte words (uint32) -> hashes of `bits` bits, ASCII case folded; as array
    indexes (indexing with uint32 converts them more slowly)."""
    return (((words & FOLDED) * MULTIPLIER) >> np.uint32(32 - bits)).astype(np.intp)


def hash_bits_for(n_blocks: int) -> int:
    """Fewer rows for a small trajectory, so its index stays a small fraction of its file."""
    return min(HASH_BITS, max(10, n_blocks.bit_length() + 6))


class Builder:
    """Collects each block's aligned grams while the file is written; save() writes the index.

    The index is bit-sliced: one row per gram hash, one bit per block, so a query reads one row per
    gram of the needle (a bit per block). Building it marks the hashes a block holds in a byte array
    (one scatter) and ORs that into the column of bytes its group of 8 blocks shares, in place: a few
    passes over the block's words and one over the 2^16 hashes, with no per-gram Python work."""

    def __init__(self) -> None:
        self._seen = np.zeros(1 << HASH_BITS, dtype=np.uint8)  # the current block's bit, at its hashes
        self._column = np.zeros(1 << HASH_BITS, dtype=np.uint8)  # blocks 8c .. 8c+7: bit k & 7
        self._columns: list[np.ndarray] = []  # the full columns before it
        self._words = np.empty(0, dtype=np.uint32)  # scratch, reused from block to block
        self._hashes = np.empty(0, dtype=np.intp)
        self._firsts: list[int] = []
        self._always: list[int] = []

    def add(self, first: int, raw: bytes) -> None:
        k = len(self._firsts)
        n = len(raw) // GRAM
        if n > len(self._words):
            self._words, self._hashes = np.empty(n, dtype=np.uint32), np.empty(n, dtype=np.intp)
        words, hashes = self._words[:n], self._hashes[:n]
        # gram_hashes, in place: ((word & FOLDED) * MULTIPLIER) >> (32 - HASH_BITS), as indexes
        np.bitwise_and(np.frombuffer(raw, dtype="<u4", count=n), FOLDED, out=words)
        np.multiply(words, MULTIPLIER, out=words)
        np.right_shift(words, np.uint32(32 - HASH_BITS), out=words)
        hashes[...] = words
        seen = self._seen
        seen[hashes] = 1 << (k & 7)
        np.bitwise_or(self._column, seen, out=self._column)
        seen.fill(0)
        if k & 7 == 7:
            self._columns.append(self._column)
            self._column = np.zeros_like(self._column)
        self._firsts.append(first)
        if has_odd_characters(raw):
            self._always.append(k)

    def content(self) -> bytes:
        n_blocks = len(self._firsts)
        columns = self._columns + ([self._column] if n_blocks & 7 else [])
        rows = (np.stack(columns, axis=1) if columns else np.zeros((1 << HASH_BITS, 0), dtype=np.uint8))
        bits = hash_bits_for(n_blocks)
        while rows.shape[0] > 1 << bits:  # fold: hash h keeps only its top bits
            rows = rows[0::2] | rows[1::2]
        head = np.array([n_blocks, bits, rows.shape[1], len(self._always)], dtype="<u4")
        parts = (head, np.array(self._firsts, dtype="<u4"), np.array(self._always, dtype="<u4"))
        return MAGIC + b"".join(a.tobytes() for a in parts) + np.ascontiguousarray(rows).tobytes()

    def save(self, storage: Storage, trajectory_file: str) -> None:
        name = index_name(trajectory_file)
        saved = storage.save(name, ContentFile(self.content()))
        if saved != name:
            storage.delete(saved)
            raise OSError(f"storage renamed {name} to {saved}")


def build(storage: Storage, trajectory_file: str, blocks: Iterable) -> None:
    """The index of a finished trajectory file, from its blocks (the store's Blocks, in order):
    for files written before indexes existed (manage.py index_trajectories)."""
    builder = Builder()
    with storage.open(trajectory_file, "rb") as f:
        for block in blocks:
            f.seek(block.offset)
            builder.add(block.first, f.read(block.length))
    builder.save(storage, trajectory_file)


def delete(storage: Storage, trajectory_file: str) -> None:
    with contextlib.suppress(OSError):
        storage.delete(index_name(trajectory_file))


class Index:
    """A saved index, memory-mapped where the storage has local paths (a query reads only the rows
    of its grams), else read whole."""

    def __init__(self, raw: np.ndarray) -> None:
        at = len(MAGIC)
        n_blocks, self.bits, row_bytes, n_always = (int(x) for x in raw[at:at + 16].view("<u4"))
        at += 16
        self.firsts = raw[at:at + 4 * n_blocks].view("<u4")
        at += 4 * n_blocks
        self.always = raw[at:at + 4 * n_always].view("<u4")
        at += 4 * n_always
        self.rows = raw[at:at + (row_bytes << self.bits)].reshape(1 << self.bits, row_bytes)
        self.n_blocks = n_blocks

    @classmethod
    def open(cls, storage: Storage, trajectory_file: str) -> Index | None:
        """The trajectory's index, or None when it has none (a live trajectory, one written before
        indexes existed, or a lost file)."""
        name = index_name(trajectory_file)
        try:
            path = Path(storage.path(name))
        except NotImplementedError:
            path = None
        try:
            if path is not None:
                raw = np.memmap(path, dtype=np.uint8, mode="r")
            else:
                with storage.open(name, "rb") as f:
                    raw = np.frombuffer(f.read(), dtype=np.uint8)
        except (FileNotFoundError, ValueError):
            return None
        return cls(raw) if bytes(raw[:len(MAGIC)]) == MAGIC else None

    def _blocks_with_segment(self, segment: bytes) -> np.ndarray:
        """Bits of the blocks that may hold this run of ASCII bytes (at least MIN_NEEDLE long)."""
        found = np.zeros(self.rows.shape[1], dtype=np.uint8)
        for shift in range(GRAM):
            usable = (len(segment) - shift) // GRAM * GRAM
            words = np.frombuffer(segment[shift:shift + usable], dtype="<u4")
            hashes = sorted(set(gram_hashes(words, self.bits).tolist()))
            found |= np.bitwise_and.reduce(self.rows[hashes], axis=0)
        return found

    def candidates(self, needle: bytes) -> np.ndarray | None:
        """Sorted `first` indexes of the blocks that may hold `needle` (the stored bytes of a
        lower-cased query, as search escapes it), or None when the needle is too short to narrow."""
        segments = [s for s in _ascii_runs(needle) if len(s) >= MIN_NEEDLE]
        if not segments:
            return None
        found = np.bitwise_and.reduce([self._blocks_with_segment(s) for s in segments], axis=0)
        held = np.unpackbits(found, bitorder="little")[:self.n_blocks].astype(bool)
        held[np.asarray(self.always, dtype=np.int64)] = True
        return np.asarray(self.firsts, dtype=np.int64)[held]


def _ascii_runs(needle: bytes) -> list[bytes]:
    runs, run = [], bytearray()
    for byte in needle:
        if byte < 0x80:
            run.append(byte)
        elif run:
            runs.append(bytes(run))
            run = bytearray()
    if run:
        runs.append(bytes(run))
    return runs

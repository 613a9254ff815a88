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
    gram of the needle (a bit per block), and building it is an OR into the rows a block touches."""

    def __init__(self) -> None:
        self._seen = np.zeros(1 << HASH_BITS, dtype=np.bool_)
        self._rows = np.zeros((1 << HASH_BITS, 8), dtype=np.uint8)
        self._firsts: list[int] = []
        self._always: list[int] = []

    def add(self, first: int, raw: bytes) -> None:
        k = len(self._firsts)
        if k >> 3 >= self._rows.shape[1]:  # room for twice as many blocks
            self._rows = np.concatenate([self._rows, np.zeros_like(self._rows)], axis=1)
        self._seen[gram_hashes(np.frombuffer(raw, dtype="<u4", count=len(raw) // GRAM))] = True
        held = np.flatnonzero(self._seen)
        self._seen[held] = False
        self._rows[held, k >> 3] |= np.uint8(1 << (k & 7))
        self._firsts.append(first)
        if has_odd_characters(raw):
            self._always.append(k)

    def content(self) -> bytes:
        n_blocks = len(self._firsts)
        bits, rows = hash_bits_for(n_blocks), self._rows[:, :(n_blocks + 7) // 8]
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
    """The index of a finished trajectory file, from its blocks (trajectory_store Blocks, in order):
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

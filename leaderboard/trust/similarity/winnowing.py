"""Winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003), the fingerprinting of MOSS and Dolos.

Every run of k consecutive tokens (a k-gram) is hashed; of each window of w consecutive k-gram hashes
the smallest is kept (the rightmost of equal ones), once. Two texts sharing a run of at least
w + k - 1 tokens then share a kept hash, and runs shorter than k tokens (a line of imports, an
idiom) never match. The hashes are 63-bit (a signed 64-bit column holds them) and the same in every
process: Python's own hash() of a string is salted per process, so stored fingerprints could not
be compared with new ones; here a token's id is its BLAKE2b digest.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

K = 20  # tokens per k-gram: below this a shared stretch is noise (about two lines of Python)
W = 10  # k-grams per window: a shared stretch of W + K - 1 = 29 tokens is always found
_MASK = (1 << 63) - 1


class Mark(NamedTuple):
    hash: int
    position: int  # index of the k-gram's first token


_BASE = np.uint64(0x100000001B3)  # the k-gram polynomial's base (odd: a unit mod 2^64)


def _symbol_id(symbol: str, _cache: dict[str, int] = {}) -> int:  # noqa: B006 - a deliberate memo
    found = _cache.get(symbol)
    if found is None:
        found = int.from_bytes(hashlib.blake2b(symbol.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
        if len(_cache) < 100_000:  # operators and keywords repeat; odd tokens must not grow it unbounded
            _cache[symbol] = found
    return found


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a polynomial's low bits are poorly spread, and winnowing keeps minima."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def kgram_hashes(symbols: Sequence[str], k: int = K) -> list[int]:
    """The hash of every k-gram, in order (none when there are fewer than k symbols): the k symbols'
    ids (BLAKE2b of each) as a polynomial in _BASE mod 2^64, mixed, cut to 63 bits. Vectorised:
    k passes over the array instead of one hash call per k-gram."""
    n = len(symbols) - k + 1
    if n <= 0:
        return []
    ids = np.fromiter((_symbol_id(s) for s in symbols), dtype=np.uint64, count=len(symbols))
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            h = h * _BASE + ids[j:j + n]
        return (_mix(h) & np.uint64(_MASK)).tolist()


def winnow(hashes: Sequence[int], w: int = W) -> list[Mark]:
    """The kept hashes with their positions, in order. One pass with a deque of the window's
    candidates (increasing hashes): a later equal hash evicts an earlier one, so the rightmost
    minimum is at the front. A text shorter than a window is one window."""
    kept: list[Mark] = []
    window: deque[int] = deque()
    for j, h in enumerate(hashes):
        while window and hashes[window[-1]] >= h:
            window.pop()
        window.append(j)
        if window[0] <= j - w:
            window.popleft()
        if j >= w - 1 or j == len(hashes) - 1:
            if not kept or kept[-1].position != window[0]:
                kept.append(Mark(hashes[window[0]], window[0]))
    return kept


def fingerprint(symbols: Sequence[str], k: int = K, w: int = W) -> list[Mark]:
    return winnow(kgram_hashes(symbols, k), w)

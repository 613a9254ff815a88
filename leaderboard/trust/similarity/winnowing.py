"""Winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003), the fingerprinting of MOSS and Dolos.

Every run of k consecutive tokens (a k-gram) is hashed; of each window of w consecutive k-gram hashes
the smallest is kept (the rightmost of equal ones), once. Two texts sharing a run of at least
w + k - 1 tokens then share a kept hash, and runs shorter than k tokens (a line of imports, an
idiom) never match. The hashes are 63-bit (a signed 64-bit column holds them) and the same in every
process: Python's own hash() of a string is salted per process, so stored fingerprints could not
be compared with new ones.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Sequence
from typing import NamedTuple

K = 20  # tokens per k-gram: below this a shared stretch is noise (about two lines of Python)
W = 10  # k-grams per window: a shared stretch of W + K - 1 = 29 tokens is always found
_MASK = (1 << 63) - 1


class Mark(NamedTuple):
    hash: int
    position: int  # index of the k-gram's first token


def _symbol_bytes(symbol: str, _cache: dict[str, bytes] = {}) -> bytes:  # noqa: B006 - a deliberate memo
    found = _cache.get(symbol)
    if found is None:
        found = hashlib.blake2b(symbol.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        if len(_cache) < 100_000:  # operators and keywords repeat; odd tokens must not grow it unbounded
            _cache[symbol] = found
    return found


def kgram_hashes(symbols: Sequence[str], k: int = K) -> list[int]:
    """The hash of every k-gram, in order (none when there are fewer than k symbols)."""
    parts = [_symbol_bytes(s) for s in symbols]
    return [int.from_bytes(hashlib.blake2b(b"".join(parts[i:i + k]), digest_size=8).digest(), "big") & _MASK
            for i in range(len(parts) - k + 1)]


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

"""Normalised tokens and winnowing, against brute-force computations written from the paper's
definition (every window's rightmost minimum), and the properties copying must not escape."""

from __future__ import annotations

import hashlib
import random

import pytest

from leaderboard.trust.similarity import tokens, winnowing


def brute_winnow(hashes: list[int], w: int) -> set[int]:
    """Positions kept: for every window of w hashes, the rightmost of its minimum."""
    if not hashes:
        return set()
    windows = [hashes[s:s + w] for s in range(max(len(hashes) - w + 1, 1))]
    kept = set()
    for s, window in enumerate(windows):
        low = min(window)
        kept.add(s + max(i for i, h in enumerate(window) if h == low))
    return kept


@pytest.mark.parametrize("seed", range(40))
def test_winnow_keeps_each_windows_rightmost_minimum(seed):
    rng = random.Random(seed)
    n, w = rng.randrange(0, 80), rng.randrange(1, 12)
    hashes = [rng.randrange(6) for _ in range(n)]  # few values: many ties
    marks = winnowing.winnow(hashes, w)
    assert {m.position for m in marks} == brute_winnow(hashes, w)
    assert len(marks) == len({m.position for m in marks})  # each kept once
    assert all(m.hash == hashes[m.position] for m in marks)


def test_kgram_hashes_are_the_mixed_polynomial_of_the_symbols_blake2b_ids():
    """Recomputed with Python's integers, one k-gram at a time, from the definition."""
    m64 = (1 << 64) - 1

    def mix(x: int) -> int:
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m64
        return x ^ (x >> 31)

    symbols = ["import", "I", "as", "I", "\\n", "I", "=", "L", "é", "\ud800"]
    ids = [int.from_bytes(hashlib.blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
           for s in symbols]
    expected = []
    for i in range(len(symbols) - 3 + 1):
        poly = 0
        for x in ids[i:i + 3]:
            poly = (poly * 0x100000001B3 + x) & m64
        expected.append(mix(poly) & ((1 << 63) - 1))
    assert winnowing.kgram_hashes(symbols, 3) == expected
    assert winnowing.kgram_hashes(symbols[:2], 3) == []
    assert all(0 <= h < 1 << 63 for h in winnowing.kgram_hashes(symbols * 10))


def test_a_shared_stretch_of_w_plus_k_minus_1_tokens_is_always_found():
    rng = random.Random(1)
    vocab = [f"t{i}" for i in range(50)]
    for _ in range(30):
        stretch = [rng.choice(vocab) for _ in range(winnowing.W + winnowing.K - 1)]
        a = [rng.choice(vocab) for _ in range(rng.randrange(60))] + stretch + [rng.choice(vocab) for _ in range(40)]
        b = [rng.choice(vocab) for _ in range(rng.randrange(60))] + stretch
        assert {m.hash for m in winnowing.fingerprint(a)} & {m.hash for m in winnowing.fingerprint(b)}


def test_names_literals_comments_and_blank_lines_are_forgotten():
    a = "def area(r):\n    # circle\n    return 3.14 * r ** 2\n"
    b = "def f(radius):\n\n    return 3.0 * radius ** 2  # pi r squared\n"
    assert [t.symbol for t in tokens.normalised(a)] == [t.symbol for t in tokens.normalised(b)]
    assert [t.symbol for t in tokens.normalised(a)][:6] == ["def", "I", "(", "I", ")", ":"]


def test_structure_stays():
    flat = "x = 1\ny = 2\n"
    nested = "if x:\n    y = 2\n"
    assert "\\t" in [t.symbol for t in tokens.normalised(nested)]
    assert [t.symbol for t in tokens.normalised(flat)] != [t.symbol for t in tokens.normalised(nested)]


@pytest.mark.parametrize("source", [
    "def broken(:\n  return (\n", "x = '''never closed\n", "\tif x:\n  y\n\tz\n", "\x00\x01 weird \ud800 bytes",
    "library(dplyr)\ndf <- read.csv('train.csv')  # R\n", "",
])
def test_code_python_refuses_is_still_tokenized(source):
    found = tokens.normalised(source)
    assert all(isinstance(t.symbol, str) and t.line >= 1 for t in found)


def test_lines_are_kept_for_the_diff_page():
    found = tokens.normalised("a = 1\n\n# note\nb = call(\n    2)\n")
    assert [(t.symbol, t.line) for t in found if t.symbol == "I"] == [("I", 1), ("I", 4), ("I", 4)]

"""The matching regions of two code bases, side by side: the kept hashes both hold, each mapped back
to the lines its k-gram spans in either text, merged into regions per pair of texts.

Computed on demand from the code itself (read again under the same budget), since only the diff
page needs positions and storing them for every run would cost more than reading two runs again."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from leaderboard.trust.similarity import tokens, winnowing
from leaderboard.trust.similarity.extraction import Source

MAX_REGIONS = 50
MAX_LINES = 200  # per side of a region


@dataclass
class Side:
    source: Source
    first: int  # 1-based line numbers, inclusive
    last: int

    @property
    def lines(self) -> list[tuple[int, str]]:
        text = self.source.text.splitlines()
        last = min(self.last, self.first + MAX_LINES - 1)
        return [(n, text[n - 1]) for n in range(self.first, last + 1) if n - 1 < len(text)]

    @property
    def cut(self) -> bool:
        return self.last - self.first + 1 > MAX_LINES


@dataclass
class Region:
    left: Side
    right: Side
    hashes: int = 1


@dataclass
class Comparison:
    regions: list[Region] = field(default_factory=list)
    shared: int = 0
    truncated: bool = False
    sizes: tuple[int, int] = (0, 0)  # kept hashes of either side
    similarity: float = 0.0


def _spans(sources: list[Source]) -> dict[int, list[tuple[int, int, int]]]:
    """hash -> [(source number, first line, last line)] of every kept hash of these texts."""
    found: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for i, source in enumerate(sources):
        toks = tokens.normalised(source.text)
        for mark in winnowing.fingerprint([t.symbol for t in toks]):
            end = min(mark.position + winnowing.K, len(toks)) - 1
            found[mark.hash].append((i, toks[mark.position].line, toks[end].line))
    return found


def compare(left: list[Source], right: list[Source], ignore: set[int] = frozenset()) -> Comparison:
    """Regions of `left` and `right` that share kept hashes (but those in `ignore`), in the order of
    the left texts."""
    a, b = _spans(left), _spans(right)
    shared = (a.keys() & b.keys()) - ignore
    pairs = sorted((la, lb) for h in shared for la in a[h][:1] for lb in b[h][:1])  # first place of each
    merged: list[list] = []
    for (sa, fa, ta), (sb, fb, tb) in pairs:
        last = merged[-1] if merged else None
        if last and last[0] == sa and last[3] == sb and fa <= last[2] + 1 and abs(fb - last[5]) <= winnowing.K:
            last[2], last[4], last[5], last[6] = max(last[2], ta), min(last[4], fb), max(last[5], tb), last[6] + 1
        else:
            merged.append([sa, fa, ta, sb, fb, tb, 1])
    regions = [Region(Side(left[sa], fa, ta), Side(right[sb], fb, tb), n) for sa, fa, ta, sb, fb, tb, n in merged]
    return Comparison(regions[:MAX_REGIONS], len(shared), len(regions) > MAX_REGIONS, (len(a), len(b)))

"""A phrase of common words (every step holds its words, few hold the phrase) pages exactly as a
brute-force scan reads, cursor by cursor; on SQLite its candidates are asked of FTS5 a window of runs
at a time (search.windows), never all at once. The page sizes are made small so that a few hundred
steps take many pages and windows."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.search import engines, service, windows
from leaderboard.search.query import parse
from tests.search.support import all_hits, brute_force, run_with

WORDS = ["out", "of", "memory", "the", "model", "loss", "cuda", "memorymap"]


def texts(seed: int, n: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    found = []
    for _ in range(n):
        words = WORDS[:]
        rng.shuffle(words)
        if rng.random() < 0.15:
            words.insert(rng.randrange(len(words)), rng.choice(["out of memory", "the model", "timeout of memorymap"]))
        found.append((rng.choice(["error", "plan"]), " ".join(words)))
    return found


@pytest.fixture
def common(db, monkeypatch):
    monkeypatch.setattr(service, "READ_BATCH", 5)
    monkeypatch.setattr(service, "DENSE_HITS", 6)  # a batch never counts as dense: the engine's path is taken
    monkeypatch.setattr(service, "READ_LIMIT", 23)
    monkeypatch.setattr(windows, "FIRST_RUNS", 1)
    monkeypatch.setattr(windows, "TEXT_BATCH", 4)
    runs = [run_with(texts(seed, 30), private=seed == 3) for seed in range(14)]
    return [r for r in runs if not r.is_private]


def terms_of(query: str) -> list[tuple[str, str]]:
    return [(t.kind, t.value) for t in parse(query).terms]


@pytest.mark.parametrize(
    "query", ['"out of memory"', '"the model"', '"of memory"', '"out of memorymap"', "memory model", '"cuda out"']
)
def test_common_phrase_pages_as_the_scan_reads(common, query):
    expected = brute_force(common, terms_of(query))
    assert len(expected) > 3 * 7  # more than three pages of 7 (support.all_hits)
    assert all_hits(None, query) == expected


def test_common_phrase_by_kind(common):
    expected = brute_force(common, terms_of('"out of memory"'), kind="error")
    assert expected
    assert all_hits(None, '"out of memory"', kind="error") == expected


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 windows")
def test_engine_is_asked_a_window_at_a_time(common):
    with CaptureQueriesContext(connection) as queries:
        assert all_hits(None, '"out of memory"')
    asked = [q["sql"] for q in queries.captured_queries if " MATCH " in q["sql"]]
    assert sum("COUNT(*)" not in sql for sql in asked) > len(common)  # windows of a run or more
    assert all("rowid BETWEEN" in sql for sql in asked if "COUNT(*)" not in sql)
    assert all(" LIMIT " in sql for sql in asked if "COUNT(*)" in sql)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 windows")
def test_a_prefix_is_spelled_out_as_the_index_words(common):
    """`"of memory"` may end inside a word: its last word is a prefix, asked of each window as the
    words the index holds that start with it (FTS5 would merge a prefix's lists over the whole index
    at each window)."""
    with CaptureQueriesContext(connection) as queries:
        assert all_hits(None, '"of memory"') == brute_force(common, terms_of('"of memory"'))
    asked = [q["sql"] for q in queries.captured_queries if " MATCH " in q["sql"]]
    assert asked
    assert all('"memory" *' not in sql and '("memory" OR "memorymap")' in sql for sql in asked)


@pytest.mark.parametrize("query", ['"of memory"', '"of memoryzzz"', 'memo* "the model"'])
def test_a_prefix_of_many_words_is_left_to_the_engine(common, monkeypatch, query):
    monkeypatch.setattr(engines, "PREFIX_WORDS", 1)
    assert all_hits(None, query) == brute_force(common, terms_of(query))


@pytest.mark.parametrize("query", ['"of İst"', '"of épé"', '"of ÉPÉ"'])
def test_a_prefix_beyond_ascii_pages_as_the_scan_reads(common, query):
    """Such a prefix is left to FTS5, whose case folding may differ from Python's (`İ`)."""
    runs = [
        *common,
        run_with([("plan", "out of İstanbul"), ("plan", "out of épée"), ("plan", "of ÉPÉES the model")] * 9),
    ]
    assert all_hits(None, query) == brute_force(runs, terms_of(query))
    assert all_hits(None, query)

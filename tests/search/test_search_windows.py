"""A phrase of common words (every step holds its words, few hold the phrase) pages exactly as a
brute-force scan reads, cursor by cursor; on SQLite its candidates are asked of FTS5 a window of runs
at a time (search.windows), never all at once. The page sizes are made small so that a few hundred
steps take many pages and windows."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.models import Run
from leaderboard.search import engines, service, windows
from leaderboard.search.models import StepText
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


def index_statements(queries: CaptureQueriesContext) -> list[str]:
    """The statements that asked PostgreSQL's GIN indexes (words or trigrams): not those reading the
    text of rows by their ids, nor the planner's estimate (EXPLAIN), nor the sample of the rows that
    tells which index names fewer (engines.sampled_rows)."""
    return [
        q["sql"]
        for q in queries.captured_queries
        if ("words_tsv @@" in q["sql"] or " ILIKE " in q["sql"])
        and '"leaderboard_steptext"."id" IN (' not in q["sql"]
        and not q["sql"].startswith("EXPLAIN")
        and "TABLESAMPLE" not in q["sql"]
    ]


@pytest.fixture
def rare(common):
    """The common runs and, among the newest, a word in 2 steps of 120."""
    texts = [("plan", f"an ordinary step {i} of the model") for i in range(120)]
    texts[3], texts[101] = ("error", "a quokka at last"), ("plan", "the quokka again")
    return [*common, run_with(texts[:60]), run_with(texts[60:])]


@pytest.mark.postgres
@pytest.mark.parametrize("query", ["quokka", '"out of memory"', '"uokk"', 'quokk* "the"', '"quokka at last"'])
def test_postgresql_lists_the_index_candidates_once_a_statement(rare, query):
    """Never the rows in page order with the index's condition beside the others (a plan that walks
    the rows in order, filtering each, or scans the GIN index again for each run it joins): the words'
    index is counted, at most a page's rows (exact text whose trigrams a sample finds few is not: a
    count would read what the listing reads), then its candidates listed by a statement of their own,
    all of them or a window of runs at a time."""
    with CaptureQueriesContext(connection) as queries:
        assert all_hits(None, query) == brute_force(rare, terms_of(query))
    asked = index_statements(queries)
    listed = [sql for sql in asked if "COUNT(*)" not in sql]
    assert listed
    by_words = any("@@" in sql for sql in listed)
    assert any("COUNT(*)" in sql for sql in asked) == by_words
    for sql in listed:
        outer, inner = sql.split("= ANY(ARRAY(SELECT")
        assert "@@" not in outer and "ILIKE" not in outer and ("@@" in inner or "ILIKE" in inner), sql


@pytest.mark.postgres
def test_postgresql_asks_a_common_phrase_a_window_at_a_time(common):
    with CaptureQueriesContext(connection) as queries:
        assert all_hits(None, '"out of memory"')
    listed = [sql for sql in index_statements(queries) if "COUNT(*)" not in sql]
    assert len(listed) > len(common)  # windows of a run or more
    assert all("leaderboard_steptext.run_id BETWEEN" in sql.split("= ANY(ARRAY(")[1] for sql in listed)


def plan(sql: str, params, settings: tuple[str, ...]) -> str:
    with connection.cursor() as cursor:
        for setting in settings:
            cursor.execute(f"SET LOCAL {setting} = off")
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql, params)
        found = "\n".join(line for (line,) in cursor.fetchall())
        for setting in settings:
            cursor.execute(f"RESET {setting}")
    return found


@pytest.mark.postgres
@pytest.mark.parametrize(
    "settings",
    [
        ("enable_sort", "enable_incremental_sort", "enable_seqscan"),
        ("enable_hashjoin", "enable_mergejoin", "enable_seqscan"),
    ],
)
def test_postgresql_scans_the_words_index_once_whatever_the_plan(rare, settings):
    """The planner led to walk the rows in page order (no sort), or to join the runs one may see by a
    nested loop (as it chose at 1M steps, its statistics taking the runs for few): the listed
    candidates are still read from the words' index once, and only they are read."""
    rows = StepText.objects.filter(run__in=Run.objects.visible_to(None).values("pk")).order_by("-run_id", "index")
    if "enable_sort" in settings:  # the rows' condition beside the others: the walk in order, filtering each
        beside = engines.narrow(rows, parse("quokka")).values_list("run_id", "index")[:200]
        walked = plan(*beside.query.sql_with_params(), settings)
        assert "Index Scan using steptext_newest_run_first" in walked and "Filter: (words_tsv @@" in walked, walked
    listed = engines.narrow(rows, parse("quokka"), once=True).values_list("run_id", "index")
    found = plan(*listed.query.sql_with_params(), settings)
    scans = [line for line in found.splitlines() if "Bitmap Index Scan on steptext_words_gin" in line]
    assert len(scans) == 1 and scans[0].endswith("loops=1)"), found
    assert "InitPlan" in found and "Filter: (words_tsv" not in found, found
    assert list(listed) == [(rare[-1].pk, 41), (rare[-2].pk, 3)]


@pytest.mark.postgres
def test_postgresql_reads_back_only_the_text_that_holds_the_phrase(common):
    """Its candidates named by its words, the database checks the phrase on each whose text is read:
    only the rows holding it come back for the exact check."""
    with CaptureQueriesContext(connection) as queries:
        assert all_hits(None, '"out of memory"') == brute_force(common, terms_of('"out of memory"'))
    reads = [q["sql"] for q in queries.captured_queries if '"leaderboard_steptext"."id" IN (' in q["sql"]]
    assert reads and all("ILIKE '%out of memory%'" in sql for sql in reads)


@pytest.mark.postgres
def test_postgresql_counts_no_words_its_statistics_hold_common(rare):
    """Words in most rows, sampled by ANALYZE, go to the windows uncounted; a rare word is counted
    (its statistics can only say it is not among the most common) and listed at once."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE leaderboard_steptext")
    for query, counted in [('"out of memory"', False), ("memory model", False), ("quokka", True)]:
        with CaptureQueriesContext(connection) as queries:
            assert all_hits(None, query) == brute_force(rare, terms_of(query))
        assert any("COUNT(*)" in sql for sql in index_statements(queries)) == counted, query


@pytest.fixture
def rare_start(common):
    """The common runs and a phrase of their words, in 3 steps of 90, that starts with a rare word:
    `"CUDA out of memory"` at millions of steps, where `CUDA` may end a longer word, so the words'
    index can only ask for the common `out`, `of` and `memory*`."""
    texts = [("plan", f"out of memory {i} of the model") for i in range(90)]
    for k in (5, 44, 70):
        texts[k] = ("error", "RuntimeError: QUOKKA out of memory. Tried to allocate 2.00 GiB")
    return [*common, run_with(texts[:45]), run_with(texts[45:])]


@pytest.mark.postgres
def test_postgresql_lists_a_phrase_with_a_rare_part_by_its_trigrams(rare_start):
    """A sample finds that its trigrams name few rows: they are listed once through the trigram index,
    uncounted, with no window of runs and no word list (which names every row)."""
    with CaptureQueriesContext(connection) as queries:
        assert all_hits(None, '"quokka out of memory"') == brute_force(rare_start, terms_of('"quokka out of memory"'))
    asked = index_statements(queries)
    listed = [sql for sql in asked if "COUNT(*)" not in sql]
    assert listed and listed == asked
    for sql in listed:
        inner = sql.split("= ANY(ARRAY(SELECT")[1]
        assert "ILIKE" in inner and "@@" not in inner and "run_id BETWEEN" not in inner, sql
    assert any("TABLESAMPLE" in q["sql"] for q in queries.captured_queries)


@pytest.mark.postgres
@pytest.mark.parametrize("query", ['"emorym"', '"odel"'])
def test_postgresql_reads_in_order_what_no_index_names_few_of(common, query):
    """Exact text inside one word (no whole word to narrow by) whose trigrams are in most rows is read
    in order, a bounded number of rows a page, as SQLite reads it: the trigram index would recheck
    nearly every row."""
    with CaptureQueriesContext(connection) as queries:
        assert all_hits(None, query) == brute_force(common, terms_of(query))
    assert index_statements(queries) == []

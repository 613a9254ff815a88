"""The engines narrow the rows before the exact check: a rare term reads only the steps that hold it
(SQLite's FTS5 table of words; PostgreSQL's tsvector GIN index, which its plan uses), exact text
included, even where it ends inside a word too long to be a word."""

from __future__ import annotations

import pytest
from django.db import connection

from leaderboard.search import engines
from leaderboard.search.models import StepText
from leaderboard.search.query import parse
from leaderboard.search.service import READ_BATCH, search
from tests.search.support import run_with


@pytest.fixture
def haystack(db):
    texts = [("plan", f"ordinary step {i} with words") for i in range(2000)]
    texts[17] = ("error", "KeyError: 'zanzibar_id' in the quokka table")
    texts[1730] = ("error", "the quokka again, and zanzibarian tea")
    texts[1900] = ("plan", "a long table x" + "q" * 300 + " (no word: more than 100 letters)")
    return run_with(texts)


# `_` parts words ("zanzibarian" is another); the last two end inside a word of 301 letters, no word to
# search for, which the index keeps by its start
@pytest.mark.parametrize(("query", "hits"), [("quokka", 2), ("\"'zanzibar_id'\"", 1), ("zanzib*", 2),
                                             ("zanzibar", 1), ('"KeyError: \'zanz"', 1),
                                             ('"table x' + "q" * 40 + '"', 1), ('"table x' + "q" * 150 + '"', 1)])
def test_a_rare_term_reads_only_its_candidates(haystack, query, hits):
    page = search(user=None, query=query)
    assert sum(len(g.hits) for g in page.groups) == hits
    # of 2,000: the first batch in order (few hits there, so the engine takes over), then only candidates
    assert page.rows_read <= READ_BATCH + 2


def test_sqlite_keeps_an_fts5_table_in_step(haystack):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's FTS5 table")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {engines.FTS_TABLE} WHERE {engines.FTS_TABLE} MATCH 'quokka'")
        assert cursor.fetchone()[0] == 2
        StepText.objects.filter(index=17).delete()
        cursor.execute(f"SELECT count(*) FROM {engines.FTS_TABLE} WHERE {engines.FTS_TABLE} MATCH 'quokka'")
        assert cursor.fetchone()[0] == 1


@pytest.mark.postgres
def test_postgresql_plans_use_the_gin_indexes(haystack):
    """A word through the words' index; text inside a word, which names no whole word, through the
    trigrams' (exact text that names words as well may be narrowed by either, as the planner finds
    cheaper: its plan depends on the table's statistics)."""
    for query, index in [("quokka", "steptext_words_gin"), ('"anzibar"', "steptext_text_trgm")]:
        rows = engines.narrow(StepText.objects.all(), parse(query))
        sql, params = rows.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")  # a 300-row table: the planner would scan it
            cursor.execute("EXPLAIN " + sql, params)
            plan = "\n".join(r[0] for r in cursor.fetchall())
        assert index in plan, plan


@pytest.mark.postgres
@pytest.mark.parametrize("sample_pages", [1_000_000, 20])
def test_postgresql_estimates_the_indexes_rows_on_a_sample(haystack, monkeypatch, sample_pages):
    """The rows the trigram index and the words' index name for exact text, counted on the whole table
    (small) or estimated on a sample of its pages: `"with words"` is in 1,997 rows of 2,000 (its
    words: `words*`, the first left out); `"KeyError: 'zanzibar_id'"` and its words (`zanzibar`, `id`)
    in 1 (which a sample may miss: an estimate of 0); `"step 1"` (every title is `step <i>`): its
    trigrams in the 1,271 rows whose number holds a 1, its word (`1*`) in the 1,111 whose number
    starts with one. The table holds the rows of earlier tests too, dead, which the planner's count of
    the rows may include: the bounds are loose."""
    monkeypatch.setattr(engines, "SAMPLE_PAGES", sample_pages)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT pg_relation_size('{engines.STEPTEXT}') / 8192")
        assert cursor.fetchone()[0] > 40  # the sample of 20 pages is a sample
    by_trigrams, by_words = engines.sampled_rows(parse('"with words"'))
    assert 1_000 < by_trigrams < 10**5 and 1_000 < by_words < 10**5
    by_trigrams, by_words = engines.sampled_rows(parse("\"KeyError: 'zanzibar_id'\""))
    assert by_trigrams <= by_words < 100
    if sample_pages > 100:  # the whole table: counted
        assert (by_trigrams, by_words) == (1, 1)
        assert engines.sampled_rows(parse('"step 1"')) == (1271, 1111)
    # in no row, but its trigrams are in every row that holds `ordinary` and `words`: the index names them
    assert 1_000 < engines.sampled_rows(parse('"wordinary"'))[0] < 10**5
    if sample_pages > 100:
        assert engines.sampled_rows(parse('"wordinary"'))[0] == 1997
    assert engines.sampled_rows(parse('"::="')) is None  # no letters or digits: no trigram

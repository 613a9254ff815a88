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

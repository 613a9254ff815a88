"""Each database's full-text engine, as a filter that narrows StepText rows to candidates: never fewer
than the query matches (query.Query.spans then decides), as few more as the engine allows.

SQLite: an FTS5 table with the trigram tokenizer over the text (any substring of 3 or more
characters, any case, from the index). PostgreSQL: whole words and prefixes through a tsvector of the
row's words (GIN), exact text through ILIKE on a pg_trgm GIN index."""

from __future__ import annotations

from django.db import connection
from django.db.models import QuerySet

from leaderboard.search.query import Query

FTS_TABLE = "leaderboard_steptext_fts"
TRIGRAM = 3  # the shortest text the trigram indexes narrow on


def narrow(rows: QuerySet, query: Query) -> QuerySet:
    if connection.vendor == "postgresql":
        return _postgresql(rows, query)
    return _sqlite(rows, query)


def _sqlite(rows: QuerySet, query: Query) -> QuerySet:
    needles = [t.value for t in query.terms if len(t.value) >= TRIGRAM]
    if not needles:  # every term shorter than a trigram: the exact check reads the rows in order
        return rows
    match = " AND ".join('"' + n.replace('"', '""') + '"' for n in needles)
    return rows.extra(where=[f"leaderboard_steptext.id IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s)"],
                      params=[match])


def _postgresql(rows: QuerySet, query: Query) -> QuerySet:
    lexemes = [f"'{t.value}'" + (":*" if t.kind == "prefix" else "") for t in query.terms if t.kind != "exact"]
    where, params = [], []
    if lexemes:  # words are letters and digits only: nothing to escape in a tsquery
        where.append("leaderboard_steptext.words_tsv @@ %s::tsquery")
        params.append(" & ".join(lexemes))
    for term in query.terms:
        if term.kind == "exact":
            where.append("leaderboard_steptext.text ILIKE %s")
            params.append("%" + term.value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    return rows.extra(where=where, params=params) if where else rows

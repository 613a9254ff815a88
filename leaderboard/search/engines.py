"""Each database's full-text engine, as a filter that narrows StepText rows to candidates: never fewer
than the query matches (query.Query.spans then decides), as few more as the engine allows.

SQLite: an FTS5 table of the text's words (unicode61: letters and digits, any case, as search.text
splits them): words and prefixes as they are; exact text as the phrase of its words, the first left
out where the text may start inside a word and the last a prefix where it may end inside one (a
trigram table would narrow substrings inside words too, but costs 8x more to build on import).
PostgreSQL: words and prefixes through a tsvector of the row's words (GIN), exact text through ILIKE
on a pg_trgm GIN index."""

from __future__ import annotations

from django.db import connection
from django.db.models import QuerySet

from leaderboard.search.query import Query, Term
from leaderboard.search.text import WORD

FTS_TABLE = "leaderboard_steptext_fts"


def narrow(rows: QuerySet, query: Query) -> QuerySet:
    if connection.vendor == "postgresql":
        return _postgresql(rows, query)
    return _sqlite(rows, query)


def _sqlite(rows: QuerySet, query: Query) -> QuerySet:
    parts = [p for p in map(_fts_phrase, query.terms) if p]
    if not parts:  # nothing a word index can narrow on (text inside one word): read the rows in order
        return rows
    return rows.extra(where=[f"leaderboard_steptext.id IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s)"],
                      params=[" AND ".join(parts)])


def _fts_phrase(term: Term) -> str:
    """The FTS5 phrase every row holding the term holds; "" when there is none."""
    if term.kind == "word":
        return f'"{term.value}"'
    if term.kind == "prefix":
        return f'"{term.value}" *'
    found = list(WORD.finditer(term.value))
    if found and found[0].start() == 0:  # may be the end of a longer word in the text
        found = found[1:]
    if not found:
        return ""
    partial_end = found[-1].end() == len(term.value)  # may be the start of a longer word
    return '"' + " ".join(m.group() for m in found) + '"' + (" *" if partial_end else "")


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

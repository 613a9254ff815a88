"""Each database's full-text engine, as a filter that narrows StepText rows to candidates: never fewer
than the query matches (query.Query.spans then decides), as few more as the engine allows.

Both index the words of a row (search.text: letters and digits, any case) without their positions,
which is what keeps them cheap to build on every import (benchmarks/ingest.py): words and prefixes
narrow as they are; exact text by the words it holds (the first left out where the text may start
inside a word, the last a prefix where it may end inside one), the exact check then confirming that
they stand together. Exact text inside a single word (`"rror"`) names no whole word: it is read in
order, a bounded number of rows a page (service.py).

SQLite: an FTS5 table of the text (unicode61, detail=none: no positions). PostgreSQL: a tsvector of
the row's distinct words (search.text.word_set, a long word cut to its start) with a GIN index, and
exact text also through ILIKE on a pg_trgm GIN index of the text (substrings such as `KeyError: 'id'`
or a file path, inside words too, where the words index cannot narrow: production's searches of
error text and paths stay indexed. It is most of a PostgreSQL import's index cost, docs/search.md)."""

from __future__ import annotations

from django.db import connection
from django.db.models import QuerySet

from leaderboard.search.query import Query, Term
from leaderboard.search.text import WORD, WORD_CHARS

FTS_TABLE = "leaderboard_steptext_fts"
STEPTEXT = "leaderboard_steptext"
VOCAB_TABLE = "leaderboard_steptext_vocab"  # a connection's own fts5vocab view of FTS_TABLE's words
PREFIX_WORDS = 16  # a prefix with more words than this is left to FTS5
COMMON_SHARE = 0.01  # PostgreSQL: words its statistics hold for more of the rows than this are not counted


def narrow(rows: QuerySet, query: Query, ids: tuple[int, int] | None = None,
           words: dict[str, list[str]] | None = None, once: bool = False) -> QuerySet:
    """`ids`: a window of runs (search.windows), on SQLite as its rows' id range, which FTS5 reads
    from its index as a range of each word's list, on PostgreSQL as its run ids' range
    (by_id_range); `words` (SQLite): prefixes spelled out as the words the index holds
    (prefix_words). `once` (PostgreSQL): the index's candidates listed by a statement of their own
    and the rows read by their ids (listed_once), for search.windows, which asks for them only where
    they are few: it counts them first, or asks a window of runs."""
    needs = [need for term in query.terms for need in term_words(term)]
    if connection.vendor == "postgresql":
        if once:
            return listed_once(rows, query, ids)
        return _postgresql(rows, query)
    if not needs:  # nothing a word index can narrow on (text inside one word): read the rows in order
        return rows
    where, params = _fts_match(needs, words or {})
    if ids is not None:
        where, params = where + " AND rowid BETWEEN %s AND %s", [*params, *ids]
    return rows.extra(where=[f"leaderboard_steptext.id IN (SELECT rowid FROM {where})"], params=params)


def matches_at_most(query: Query, limit: int, words: dict[str, list[str]] | None = None) -> int:
    """How many rows the index names for the query, counting no further than `limit` (FTS5 stops
    there: a common word costs no more than a rare one; PostgreSQL reads the lists of the query's
    words in its GIN index once, or walks the rows until `limit` of them hold the words, whichever
    its planner finds cheaper)."""
    if connection.vendor == "postgresql":
        where, params = _pg_conditions(query, listing=True)
        with connection.cursor() as cursor:
            if _held_common(cursor, " AND ".join(where), params):
                return limit
            cursor.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM {STEPTEXT} WHERE {' AND '.join(where)} LIMIT %s) n",
                           [*params, limit])
            return cursor.fetchone()[0]
    where, params = _fts_match([need for term in query.terms for need in term_words(term)], words)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM (SELECT rowid FROM {where} LIMIT %s)", [*params, limit])
        return cursor.fetchone()[0]


def listed_when_few(query: Query, limit: int) -> bool:
    """PostgreSQL: whether the index names at most `limit` rows for the query, so that narrow(...,
    once=True) lists them by a statement of their own (listed_once) rather than beside the other
    conditions, where a rare word is taken for a common one and the rows are walked in order, each
    filtered. Elsewhere False: FTS5 reads only a word's own list, however it is asked."""
    return (connection.vendor == "postgresql" and bool(_pg_conditions(query, listing=True)[0])
            and matches_at_most(query, limit + 1) <= limit)


def _held_common(cursor, where: str, params: list) -> bool:
    """PostgreSQL: whether its planner's statistics hold the rows matching `where` for more than
    COMMON_SHARE of the table. Only words among their most common ones, sampled, are estimated that
    high: a word outside them is taken for half the least common one's share or 0.5%, whichever is
    less (PostgreSQL's tsquery selectivity), so such a query's words are common, and counting them,
    which reads their whole lists in the GIN index (130-200 ms for two common words at 4M steps),
    is skipped for the windows, which read them anyway. Words common apart and rare together (taken
    for common) are then read a window at a time: bounded, only slower than listing them."""
    cursor.execute(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {STEPTEXT} WHERE {where}", params)
    estimated = cursor.fetchone()[0][0]["Plan"]["Plan Rows"]
    cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [STEPTEXT])
    rows = cursor.fetchone()[0]
    return rows > 0 and estimated > COMMON_SHARE * rows


def windowed(query: Query) -> bool:
    """Whether search.windows reads this query's candidates: when the index narrows them (SQLite: by
    the query's words; PostgreSQL: by its words or, for exact text, its trigrams)."""
    if connection.vendor == "postgresql":
        return bool(_pg_conditions(query)[0])
    return any(term_words(term) for term in query.terms)


def by_id_range() -> bool:
    """Whether search.windows asks a window by its rows' id range (SQLite: FTS5 reads each word's list
    over that range only) rather than its run ids (PostgreSQL: a GIN index reads its lists whole at
    every statement, whatever the range; the run ids' range comes from the rows' index by run)."""
    return connection.vendor == "sqlite"


def prefix_words(query: Query) -> dict[str, list[str]]:
    """SQLite: each prefix the query narrows by -> the words of the index that start with it, where
    there are at most PREFIX_WORDS (fts5vocab lists them in order). FTS5 reads a prefix by merging
    the lists of all its words into one, over the whole index, at every query; the words themselves
    it reads only over the ids asked for, so a search asking window after window spells them out
    once."""
    prefixes = {word for term in query.terms for word, prefix in term_words(term) if prefix}
    if not prefixes or connection.vendor != "sqlite":  # a GIN index reads a prefix's lists once a statement
        return {}
    found = {}
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{VOCAB_TABLE} USING fts5vocab(main, {FTS_TABLE}, row)")
        for prefix in prefixes:
            cursor.execute(f"SELECT term FROM temp.{VOCAB_TABLE} WHERE term >= %s AND term < %s LIMIT %s",
                           [prefix, prefix + chr(0x10FFFF), PREFIX_WORDS + 1])
            words = [word for (word,) in cursor.fetchall() if word.startswith(prefix)]
            if len(words) <= PREFIX_WORDS and all(WORD.fullmatch(word) for word in words):
                found[prefix] = words
    return found


def _fts_match(needs: list[tuple[str, bool]], words: dict[str, list[str]] | None = None) -> tuple[str, list]:
    parts = []
    for word, prefix in needs:
        if prefix and word in (words or {}):
            spelled = words[word] or [word]  # no such word: the word itself, which matches nothing more
            parts.append("(" + " OR ".join(f'"{w}"' for w in spelled) + ")")
        else:
            parts.append(f'"{word}"' + (" *" if prefix else ""))
    return f"{FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [" AND ".join(parts)]


def term_words(term: Term) -> list[tuple[str, bool]]:
    """(word, is a prefix) that every row matching the term holds; [] when there are none."""
    if term.kind == "word":
        return [(term.value, False)]
    if term.kind == "prefix":
        return [(term.value, True)]
    found = list(WORD.finditer(term.value))
    if found and found[0].start() == 0:  # may be the end of a longer word in the text
        found = found[1:]
    needs = []
    for match in found:
        word = match.group()
        partial = match.end() == len(term.value)  # may be the start of a longer word
        # A word of the text longer than WORD_CHARS is indexed by its first WORD_CHARS characters
        # (PostgreSQL's word_set): look for those as a prefix.
        if len(word) > WORD_CHARS:
            word, partial = word[:WORD_CHARS], True
        needs.append((word, partial))
    return needs


def _pg_conditions(query: Query, listing: bool = False) -> tuple[list[str], list]:
    """PostgreSQL's conditions on a row of the index (SQL on STEPTEXT, parameters): its words through
    the tsvector (GIN), exact text through ILIKE on the pg_trgm index, which narrows text inside a
    word (`"rror"`, a path) that names no whole word; none when neither can narrow. `listing`
    (matches_at_most, listed_once): the words alone when the query has any, the exact check deciding
    the rest, as on SQLite. A trigram index's match is rechecked on every row it names, and exact text
    of common words names many: `"out of memory"` named 66,322 rows at 4M steps for 404 that held
    it (a count of them took 4.9 s), and the planner takes such a list for a few hundred rows."""
    where, params = [], []
    needs = [need for term in query.terms for need in term_words(term)]
    if needs:  # words are letters and digits only: nothing to escape in a tsquery
        where.append(f"{STEPTEXT}.words_tsv @@ %s::tsquery")
        params.append(" & ".join(f"'{word}'" + (":*" if prefix else "") for word, prefix in needs))
        if listing:
            return where, params
    for term in query.terms:
        if term.kind == "exact" and len(term.value) >= 3:  # a trigram needs 3 characters
            where.append(f"{STEPTEXT}.text ILIKE %s")
            params.append("%" + term.value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    return where, params


def text_filter(query: Query) -> tuple[str, list] | None:
    """PostgreSQL: the exact text that listed_once leaves out (the query has words), as a condition
    on a row (SQL, parameters) for the database to evaluate on each candidate, so that only those
    that hold it have their text read back for the exact check; None where there is none."""
    if connection.vendor != "postgresql":
        return None
    where, params = _pg_conditions(query)
    listed = len(_pg_conditions(query, listing=True)[0])
    return (" AND ".join(where[listed:]), params[listed:]) if len(where) > listed else None


def _postgresql(rows: QuerySet, query: Query) -> QuerySet:
    where, params = _pg_conditions(query)
    return rows.extra(where=where, params=params) if where else rows


def listed_once(rows: QuerySet, query: Query, runs: tuple[int, int] | None = None) -> QuerySet:
    """PostgreSQL: `rows` narrowed to the ids that a statement of their own lists from the GIN index
    (within the run ids `runs`), run once (an InitPlan), the rows then read by their ids. With the
    index's condition beside the others and the rows asked in page order, the planner takes a rare
    word for a common one (`quokka` at 4M steps: 17,293 rows estimated, 42 found) and walks the rows
    in page order filtering each, to the end for a rare one (4M rows walked, 6.9 s); or, with the
    runs one may see joined by a nested loop, scans the GIN index once for each run (1,000 scans at
    1M steps, with out-of-date statistics)."""
    where, params = _pg_conditions(query, listing=True)
    if not where:
        return rows
    if runs is not None:
        where, params = [*where, f"{STEPTEXT}.run_id BETWEEN %s AND %s"], [*params, *runs]
    listed = f"SELECT {STEPTEXT}.id FROM {STEPTEXT} WHERE {' AND '.join(where)}"
    return rows.extra(where=[f"{STEPTEXT}.id = ANY(ARRAY({listed}))"], params=params)

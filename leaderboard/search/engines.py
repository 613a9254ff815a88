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
SAMPLE_PAGES = 2_000  # PostgreSQL: pages sampled to estimate the rows each index names for exact text


def listing(query: Query, few: int) -> str:
    """What lists a query's candidates for search.windows: "words" (the index of words, on both
    engines), "trigrams" (PostgreSQL: exact text through the pg_trgm index), or "" (nothing narrows:
    the rows are read in order, a bounded number a page, as SQLite reads exact text inside one word).
    A trigram index's every candidate is read again to recheck it, so on PostgreSQL exact text is
    listed by its trigrams only where a sample of the rows (sampled_rows) finds that they name at most
    about `few` rows and its words do not: `"CUDA out of memory"`, where `CUDA` may end a longer word,
    so that the words' index can only ask for `out`, `of` and `memory*`, which about one row in a
    hundred holds."""
    has_words = any(term_words(term) for term in query.terms)
    if connection.vendor == "postgresql":
        sampled = sampled_rows(query)
        if sampled is not None and sampled[0] <= few and not (has_words and sampled[1] <= few):
            return "trigrams"
    return "words" if has_words else ""


def narrow(rows: QuerySet, query: Query, ids: tuple[int, int] | None = None,
           words: dict[str, list[str]] | None = None, once: bool = False, by: str = "words") -> QuerySet:
    """`ids`: a window of runs (search.windows), on SQLite as its rows' id range, which FTS5 reads
    from its index as a range of each word's list, on PostgreSQL as its run ids' range
    (by_id_range); `words` (SQLite): prefixes spelled out as the words the index holds
    (prefix_words). `once` (PostgreSQL): the index's candidates listed by a statement of their own
    and the rows read by their ids (listed_once), `by` the query's words or its exact text's trigrams
    (listing), for search.windows, which asks for them only where they are few: it counts them first,
    or asks a window of runs. Without `once`, every condition either index can narrow by."""
    needs = query_words(query)
    if connection.vendor == "postgresql":
        if once:
            return listed_once(rows, query, ids, by)
        return _postgresql(rows, query)
    if not needs:  # nothing a word index can narrow on (text inside one word): read the rows in order
        return rows
    where, params = _fts_match(needs, words or {})
    if ids is not None:
        where, params = where + " AND rowid BETWEEN %s AND %s", [*params, *ids]
    return rows.extra(where=[f"leaderboard_steptext.id IN (SELECT rowid FROM {where})"], params=params)


def matches_at_most(query: Query, limit: int, words: dict[str, list[str]] | None = None) -> int:
    """How many rows the index of words names for the query, counting no further than `limit` (FTS5
    stops there: a common word costs no more than a rare one; PostgreSQL reads the lists of the
    query's words in its GIN index once, or walks the rows until `limit` of them hold the words,
    whichever its planner finds cheaper)."""
    if connection.vendor == "postgresql":
        where, params = _pg_conditions(query, "words")
        with connection.cursor() as cursor:
            if _held_common(cursor, " AND ".join(where), params):
                return limit
            cursor.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM {STEPTEXT} WHERE {' AND '.join(where)} LIMIT %s) n",
                           [*params, limit])
            return cursor.fetchone()[0]
    where, params = _fts_match(query_words(query), words)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM (SELECT rowid FROM {where} LIMIT %s)", [*params, limit])
        return cursor.fetchone()[0]


def listed_when_few(query: Query, limit: int, by: str) -> bool:
    """PostgreSQL: whether the index names at most `limit` rows for the query, listed `by` its words
    or its trigrams (listing), so that narrow(..., once=True, by=by) lists them by a statement of
    their own (listed_once) rather than beside the other conditions, where a rare word is taken for
    a common one and the rows are walked in order, each filtered. Elsewhere False: FTS5 reads only a
    word's own list, however it is asked."""
    if connection.vendor != "postgresql" or not by or not _pg_conditions(query, by)[0]:
        return False
    # trigrams: the sample found them few, and a count would read every candidate the listing reads
    return by == "trigrams" or matches_at_most(query, limit + 1) <= limit


def _held_common(cursor, where: str, params: list) -> bool:
    """PostgreSQL: whether its planner's statistics hold the rows matching `where` for more than
    COMMON_SHARE of the table. Only words among their most common ones, sampled, are estimated that
    high: a word outside them is taken for half the least common one's share or 0.5%, whichever is
    less (PostgreSQL's tsquery selectivity), so such a query's words are common, and counting them,
    which reads their whole lists in the GIN index (130-200 ms for two common words at 4M steps),
    is skipped for the windows, which read them anyway. Words common apart and rare together (taken
    for common) are then read a window at a time: bounded, only slower than listing them."""
    cursor.execute("SELECT most_common_elems IS NOT NULL FROM pg_stats WHERE tablename = %s AND attname = 'words_tsv'",
                   [STEPTEXT])
    sampled = cursor.fetchone()
    if not sampled or not sampled[0]:  # no statistics of the words: every estimate is a default
        return False
    return _planned_rows(cursor, where, params) > COMMON_SHARE * _planned_rows(cursor)


def sampled_rows(query: Query) -> tuple[float, float] | None:
    """PostgreSQL: about how many rows the pg_trgm index names for the query's exact text, and how many
    its words' index names, estimated on a fixed sample of the table's pages (SAMPLE_PAGES; the whole
    table when it is smaller), as the share of the rows sampled times the rows the planner counts.
    Both are read off the `words` column (folded, distinct, a third of the text): the rows holding
    each of the text's trigrams (_trigrams) in a word, which is what the trigram index names, and the
    rows holding the words the query narrows by (term_words). So exact text that is rare but made of
    common trigrams (inside one word, or its first word ending a longer one) is found to name many,
    as the index does. The planner has no statistics of trigrams (it took the 66,322 rows of `"out of
    memory"` at 4M steps for 761), and a count of the rows themselves reads every candidate the index
    names, however many. None where the query has no exact text with a letter or digit (no trigram),
    or the sample found no row."""
    exact = [term.value for term in query.terms if term.kind == "exact" and len(term.value) >= 3]
    parts = sorted({gram for value in exact for match in WORD.finditer(value) for gram in _trigrams(match.group())})
    if not parts:
        return None
    needs = query_words(query)
    holds = " AND ".join(["strpos(words, %s) > 0"] * len(parts))
    # a word: between spaces in the `words` column; a prefix: after one
    words = " AND ".join(["strpos(' ' || words || ' ', %s) > 0"] * len(needs)) or "TRUE"
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_relation_size(%s::regclass) / current_setting('block_size')::int", [STEPTEXT])
        pages = cursor.fetchone()[0]
        percent = 100.0 if pages <= SAMPLE_PAGES else 100.0 * SAMPLE_PAGES / pages
        cursor.execute(f"SELECT COUNT(*) FILTER (WHERE {holds}), COUNT(*) FILTER (WHERE {words}), COUNT(*) "
                       f"FROM {STEPTEXT} TABLESAMPLE SYSTEM (%s) REPEATABLE (0)",
                       [*parts, *(f" {word}" + ("" if prefix else " ") for word, prefix in needs), percent])
        by_trigrams, by_words, sampled = cursor.fetchone()
        if percent >= 100.0:
            return float(by_trigrams), float(by_words)
        if not sampled:  # pages of no live row: they tell nothing
            return None
        rows = _planned_rows(cursor)
    return by_trigrams / sampled * rows, by_words / sampled * rows


def query_words(query: Query) -> list[tuple[str, bool]]:
    """(word, is a prefix) that every row matching the query holds: what the words' index narrows by."""
    return [need for term in query.terms for need in term_words(term)]


def _planned_rows(cursor, where: str = "TRUE", params: list | tuple = ()) -> float:
    """The rows of STEPTEXT matching `where` as the planner estimates them (with no condition: the
    table's rows, its last count scaled to its size now)."""
    cursor.execute(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {STEPTEXT} WHERE {where}", params)
    return cursor.fetchone()[0][0]["Plan"]["Plan Rows"]


def _trigrams(word: str) -> set[str]:
    """The trigrams of a word of exact text that a row must hold, as pg_trgm reads them without the
    spaces it pads a whole word with (those only narrow further): each three letters or digits in a
    row; a shorter word whole."""
    return {word[i : i + 3] for i in range(len(word) - 2)} or {word}


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


def _pg_conditions(query: Query, by: str = "") -> tuple[list[str], list]:
    """PostgreSQL's conditions on a row of the index (SQL on STEPTEXT, parameters): its words through
    the tsvector (GIN), exact text through ILIKE on the pg_trgm index, which narrows text inside a
    word (`"rror"`, a path) that names no whole word. `by` (listing): "words" alone or "trigrams"
    alone, for a statement that lists or counts candidates (the exact check deciding the rest, as on
    SQLite); "" both. A trigram index's match is rechecked on every row it names, and exact text of
    common words names many: `"out of memory"` named 66,322 rows at 4M steps for 404 that held it (a
    count of them took 4.9 s), and the planner takes such a list for a few hundred rows."""
    where, params = [], []
    needs = query_words(query)
    if needs and by != "trigrams":  # words are letters and digits only: nothing to escape in a tsquery
        where.append(f"{STEPTEXT}.words_tsv @@ %s::tsquery")
        params.append(" & ".join(f"'{word}'" + (":*" if prefix else "") for word, prefix in needs))
    if by == "words":
        return where, params
    for term in query.terms:
        if term.kind == "exact" and len(term.value) >= 3:  # a trigram needs 3 characters
            where.append(f"{STEPTEXT}.text ILIKE %s")
            params.append("%" + term.value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    return where, params


def first_in_each_run(ids: list[int], query: Query, steps: int, kind: str = "") -> list[tuple[int, int, str]]:
    """PostgreSQL: (run id, index, text) of each run's first candidate among its first `steps` steps
    (of `kind`, if given), for the runs `ids` that have one: each run's steps read in order through
    the rows' index by run, a few a run where the query's terms are common (a saved question's count,
    questions.matching). The steps are taken before the index's conditions apply (a LIMIT in a
    subquery), which keeps the planner from asking a GIN index once for each run (the trigram
    index's 33,000 candidates of `"out of memory"` read again for each of 2,000 runs: 115 s at 2M
    steps)."""
    sql, params = first_in_each_run_statement(query, kind)
    with connection.cursor() as cursor:
        cursor.execute(sql, [ids, steps, *params])
        return cursor.fetchall()


def first_in_each_run_statement(query: Query, kind: str = "") -> tuple[str, list]:
    """first_in_each_run's statement and its parameters after the run ids and `steps`."""
    where, params = _pg_conditions(query)
    if kind:
        where, params = [*where, f"{STEPTEXT}.kind = %s"], [*params, kind]
    sql = (
        f"SELECT r.id, p.index, p.text FROM unnest(%s::bigint[]) AS r(id) CROSS JOIN LATERAL ("
        f"SELECT {STEPTEXT}.index, {STEPTEXT}.text FROM (SELECT s.index, s.kind, s.text, s.words_tsv "
        f"FROM {STEPTEXT} s WHERE s.run_id = r.id ORDER BY s.run_id DESC, s.index LIMIT %s) {STEPTEXT} "
        f"WHERE {' AND '.join(where) or 'TRUE'} ORDER BY {STEPTEXT}.index LIMIT 1) p"
    )
    return sql, params


def text_filter(query: Query, by: str) -> tuple[str, list] | None:
    """PostgreSQL: the exact text that listed_once leaves out (its candidates listed by the query's
    words), as a condition on a row (SQL, parameters) for the database to evaluate on each candidate,
    so that only those that hold it have their text read back for the exact check; None where there
    is none."""
    if connection.vendor != "postgresql" or by != "words":
        return None
    where, params = _pg_conditions(query)
    listed = len(_pg_conditions(query, "words")[0])
    return (" AND ".join(where[listed:]), params[listed:]) if len(where) > listed else None


def _postgresql(rows: QuerySet, query: Query) -> QuerySet:
    where, params = _pg_conditions(query)
    return rows.extra(where=where, params=params) if where else rows


def listed_once(rows: QuerySet, query: Query, runs: tuple[int, int] | None = None, by: str = "words") -> QuerySet:
    """PostgreSQL: `rows` narrowed to the ids that a statement of their own lists from the GIN index
    (within the run ids `runs`), run once (an InitPlan), the rows then read by their ids. With the
    index's condition beside the others and the rows asked in page order, the planner takes a rare
    word for a common one (`quokka` at 4M steps: 17,293 rows estimated, 42 found) and walks the rows
    in page order filtering each, to the end for a rare one (4M rows walked, 6.9 s); or, with the
    runs one may see joined by a nested loop, scans the GIN index once for each run (1,000 scans at
    1M steps, with out-of-date statistics)."""
    where, params = _pg_conditions(query, by)
    if not where:
        return rows
    if runs is not None:
        where, params = [*where, f"{STEPTEXT}.run_id BETWEEN %s AND %s"], [*params, *runs]
    listed = f"SELECT {STEPTEXT}.id FROM {STEPTEXT} WHERE {' AND '.join(where)}"
    return rows.extra(where=[f"{STEPTEXT}.id = ANY(ARRAY({listed}))"], params=params)

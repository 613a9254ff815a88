"""The engine's candidates in page order, a window of runs at a time, so that a page costs what it
reads rather than what the whole index matches.

Asked for every row holding all the words, FTS5 lists them all, and SQLite then looks up and sorts
every one before handing over the first in page order, again for each batch a page reads: a phrase of
common words (`"out of memory"`: rows holding `of` and a word starting `memory`) cost seconds at 1M
steps. PostgreSQL's planner, asked for the rows in page order with a LIMIT, walks them in that order
filtering each by the words, which reads every row for a rare word (engines.listed_once). Here a
query whose words name few rows (up to READ_LIMIT) has them listed once, keys only (run, index, id:
no text), in page order; otherwise the runs are taken newest first in windows that grow, each
window's rows asked of the index (SQLite: FTS5 by their id range, from the index of rows by
trajectory, each run's rows lying in its trajectory's id range; PostgreSQL: the GIN index's
candidates within the window's run ids, listed by a statement of their own), and the text read only
for the keys checked (on PostgreSQL only of those that hold the query's exact text). The page stops
at its size, as a scan in order would, so the hits and the cursor are the ones the rows read in
order give."""

from __future__ import annotations

from django.db import connection
from django.db.models import Q, QuerySet

from leaderboard.search import engines
from leaderboard.search.models import StepText
from leaderboard.search.query import Query

FIRST_RUNS = 64  # the first window's runs; each next window has GROWTH times as many
GROWTH = 8
END = 2**31 - 1  # past any step index: a cursor (run, END) has read the whole run
TEXT_BATCH = 200


def walk(
    rows: QuerySet, runs: QuerySet, parsed: Query, after: tuple[int, int], size: int, limit: int, by: str = "words"
):
    """(hits, rows checked, cursor of the next page or None), reading `rows` (StepText, filtered: the
    runs one may see, a kind) after the cursor; `runs`: the run ids those rows come from; `by`: what
    lists the candidates (engines.listing)."""
    if limit <= 0:  # the page has read its rows in order already
        return [], 0, after
    words = engines.prefix_words(parsed)
    # few: list them all at once (trigrams: the sample found them few, and a count would read them all)
    if by == "trigrams" or engines.matches_at_most(parsed, limit + 1, words) <= limit:
        found, read, last = _check(_keys(rows, parsed, after, None, words, limit, by), parsed, size, limit, by)
        return found, read, last if last is not None and (len(found) >= size or read >= limit) else None
    found, read, window = [], 0, FIRST_RUNS
    while True:
        newer = runs.filter(pk__lt=after[0]) if after[1] == END else runs.filter(pk__lte=after[0])
        ids = list(newer.order_by("-pk").values_list("pk", flat=True)[:window])
        if not ids:
            return found, read, None
        low, high = min(ids), max(ids)
        span = _id_span(low, high) if engines.by_id_range() else (low, high)
        if span is not None:
            keys = _keys(rows.filter(run_id__gte=low, run_id__lte=high), parsed, after, span, words, limit - read, by)
            more, more_read, last = _check(keys, parsed, size - len(found), limit - read, by)
            found, read = found + more, read + more_read
            if len(found) >= size or read >= limit:
                return found, read, last
        if len(ids) < window:
            return found, read, None
        after, window = (low, END), window * GROWTH


def _keys(
    rows: QuerySet,
    parsed: Query,
    after: tuple[int, int],
    ids: tuple[int, int] | None,
    words: dict[str, list[str]] | None,
    limit: int,
    by: str,
) -> list[tuple]:
    """The first `limit` candidates' keys after the cursor, in page order."""
    rows = rows.filter(Q(run_id__lt=after[0]) | Q(run_id=after[0], index__gt=after[1]))
    keys = engines.narrow(rows, parsed, ids, words, once=True, by=by).order_by("-run_id", "index")
    return list(keys.values_list("run_id", "index", "id")[:limit])


def _check(keys: list[tuple], parsed: Query, size: int, limit: int, by: str):
    """The exact check of the keys in order, their text read a batch at a time, until `size` hits or
    `limit` rows; (hits, rows checked, the last key checked or None)."""
    found, read, last = [], 0, None
    for start in range(0, min(len(keys), limit), TEXT_BATCH):
        batch = keys[start : min(start + TEXT_BATCH, limit)]
        texts = _texts(batch, parsed, by)
        for run_id, index, pk in batch:
            read, last = read + 1, (run_id, index)
            if pk not in texts:  # the database found that it does not hold the query's exact text
                continue
            kind, text = texts[pk]
            spans = parsed.spans(text)
            if spans is not None:
                found.append((run_id, index, kind, text, spans))
                if len(found) >= size:
                    return found, read, last
    return found, read, last


def _texts(batch: list[tuple], parsed: Query, by: str) -> dict[int, tuple[str, str]]:
    """The kind and text of the keys' rows; on PostgreSQL only of those that hold the query's exact
    text (engines.text_filter), which the candidates listed by their words need not."""
    rows = StepText.objects.filter(pk__in=[pk for _, _, pk in batch]).order_by()
    holds = engines.text_filter(parsed, by)
    if holds is not None:
        rows = rows.extra(where=[holds[0]], params=holds[1])
    return {pk: (kind, text) for pk, kind, text in rows.values_list("pk", "kind", "text")}


def _id_span(low: int, high: int) -> tuple[int, int] | None:
    """The smallest and largest row id of the runs low..high, from each trajectory's first and last
    row (two lookups a run in the index of rows by trajectory); None when they have no rows."""
    steptext, trajectory = StepText._meta.db_table, StepText._meta.get_field("trajectory").related_model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT MIN((SELECT MIN(id) FROM {steptext} WHERE trajectory_id = t.id)), "
            f"MAX((SELECT MAX(id) FROM {steptext} WHERE trajectory_id = t.id)) "
            f"FROM {trajectory} t WHERE t.run_id BETWEEN %s AND %s",
            [low, high],
        )
        first, last = cursor.fetchone()
    return None if first is None else (first, last)

"""One search: the rows of the runs a user may see, narrowed by the engine, checked exactly, grouped
by run, a page at a time. Hits come newest run first and in step order within a run; the cursor is
the last row read, so a page costs the same wherever it starts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db.models import QuerySet
from django.urls import reverse

from leaderboard.models import Run
from leaderboard.search import engines, windows
from leaderboard.search.highlight import snippet
from leaderboard.search.models import StepText
from leaderboard.search.query import Query, QueryError, parse

PAGE_HITS = 50
READ_BATCH = 200
DENSE_HITS = 10  # hits per batch that keep a search reading rows in order, without the engine
READ_LIMIT = 5_000  # candidate rows checked per page at most: a page may then come back short, with a cursor
MEDALS = {"gold": "gold_medal", "silver": "silver_medal", "bronze": "bronze_medal", "any": "any_medal",
          "above_median": "above_median"}
CURSOR = re.compile(r"^(\d{1,12})\.(\d{1,12})$")


@dataclass(frozen=True)
class Filters:
    competition: str = ""  # slug
    split: str = ""  # slug
    agent: str = ""  # name
    model: str = ""  # name
    experiment: int | None = None
    kind: str = ""  # a step kind
    medal: str = ""  # gold, silver, bronze, any, above_median, none
    verification: str = ""  # verified, self_reported

    def runs(self, runs: QuerySet) -> QuerySet:
        wanted = {"competition__slug": self.competition, "competition__splits__slug": self.split,
                  "experiment__agent__name": self.agent, "experiment__model__name": self.model,
                  "experiment_id": self.experiment, "verification": self.verification}
        runs = runs.filter(**{k: v for k, v in wanted.items() if v not in ("", None)})
        if self.medal == "none":
            return runs.filter(any_medal=False)
        return runs.filter(**{MEDALS[self.medal]: True}) if self.medal else runs


@dataclass
class Hit:
    index: int
    kind: str
    url: str
    snippet_html: str
    snippet: str


@dataclass
class RunHits:
    run: Run
    hits: list[Hit] = field(default_factory=list)


@dataclass
class Page:
    groups: list[RunHits]
    next_cursor: str | None  # None: nothing more to read
    rows_read: int


def parse_cursor(raw: str) -> tuple[int, int] | None:
    if not raw:
        return None
    match = CURSOR.match(raw)
    if match is None:
        raise QueryError("the cursor is not one this search handed out")
    return int(match.group(1)), int(match.group(2))


def search(*, user, query: str, filters: Filters = Filters(), cursor: str = "", size: int = PAGE_HITS) -> Page:
    parsed, after = parse(query), parse_cursor(cursor)
    runs = filters.runs(Run.objects.visible_to(user)).values("pk")
    base = StepText.objects.filter(run__in=runs)
    if filters.kind:
        base = base.filter(kind=filters.kind)
    rows = base.order_by("-run_id", "index").values_list("run_id", "index", "kind", "text")
    # A common term fills its page from the rows in order sooner than the engine lists its whole match
    # set: read in order while batches are dense in hits, and let the engine narrow the rest.
    found, read, after = _scan(rows, parsed, after, size, dense=DENSE_HITS)
    if after is not None and len(found) < size:
        by = engines.listing(parsed, READ_LIMIT)
        if by:
            more, more_read, after = windows.walk(base, runs, parsed, after, size - len(found), READ_LIMIT - read, by)
        else:  # nothing narrows (exact text inside one word, where no index names few rows): read in order
            more, more_read, after = _scan(rows, parsed, after, size - len(found))
        found, read = found + more, read + more_read
    return Page(_grouped(found), None if after is None else f"{after[0]}.{after[1]}", read)


def _scan(rows: QuerySet, parsed: Query, after: tuple[int, int] | None, size: int, dense: int = 0):
    """(hits, rows read, cursor of the next page or None). With `dense`, it stops after a batch with
    fewer hits than that."""
    found, read = [], 0
    while read < READ_LIMIT:
        before = len(found)
        chunk = _rows_after(rows, after)
        for k, (run_id, index, kind, text) in enumerate(chunk):
            spans = parsed.spans(text)
            if spans is not None:
                found.append((run_id, index, kind, text, spans))
                if len(found) >= size:
                    read += k + 1
                    return found, read, (run_id, index)
        read += len(chunk)
        if len(chunk) < READ_BATCH:
            return found, read, None
        after = chunk[-1][:2]
        if len(found) - before < dense:
            break
    return found, read, after


def _rows_after(rows: QuerySet, after: tuple[int, int] | None) -> list[tuple]:
    """The next READ_BATCH rows after the cursor: the rest of its run, then the runs before it. Two
    plain range conditions, since one OR of them leads both engines' planners away from their index."""
    if after is None:
        return list(rows[:READ_BATCH])
    chunk = list(rows.filter(run_id=after[0], index__gt=after[1])[:READ_BATCH])
    if len(chunk) < READ_BATCH:
        chunk += rows.filter(run_id__lt=after[0])[:READ_BATCH - len(chunk)]
    return chunk


def _grouped(found: list) -> list[RunHits]:
    runs = Run.objects.select_related("competition", "experiment__agent", "experiment__model").in_bulk(
        {run_id for run_id, *_ in found})
    groups: list[RunHits] = []
    for run_id, index, kind, text, spans in found:
        if not groups or groups[-1].run.pk != run_id:
            groups.append(RunHits(runs[run_id]))
        url = reverse("run-detail", args=[run_id]) + f"#step-{index}"
        html, plain = snippet(text, spans)
        groups[-1].hits.append(Hit(index, kind, url, html, plain))
    return groups

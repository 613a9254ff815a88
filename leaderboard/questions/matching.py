"""Which runs a saved question matches, among runs the caller already narrowed to what its viewer
may see, and the counts per experiment that the experiment comparison shows.

A search question matches a run when any of its steps matches (the engine narrows, the query's exact
check decides, as in search.service); a failure question when the run failed with a matching
signature (failures.signatures). Each returns the step to link: the first matching step, or the
error step the signature was read from."""

from __future__ import annotations

from collections import Counter

from django.db import connection
from django.db.models import Min, QuerySet
from django.urls import reverse

from leaderboard.failures.breakdown import FAILURE_FIELDS
from leaderboard.failures.signatures import signatures
from leaderboard.models import Run
from leaderboard.questions.models import SavedQuestion
from leaderboard.search import engines
from leaderboard.search.models import StepText
from leaderboard.search.query import Query, parse
from leaderboard.search.service import Filters

CHUNK = 1000
READ_FIRST = 2000  # candidate steps read in order before a term counts as common
PROBE = 200  # PostgreSQL: the first steps of each run that a common term is looked for in (_probed)
SAMPLE_RUNS = 50  # ... where they settle at least PROBE_WHEN_SETTLED of this many runs first
PROBE_WHEN_SETTLED = 0.5


def matching_runs(question: SavedQuestion, runs: QuerySet) -> dict[int, int | None]:
    """run id -> the step to link, for each run of `runs` the question matches."""
    if question.kind == SavedQuestion.Kind.FAILURE:
        return _failed_with(question, runs)
    return _with_a_matching_step(question, runs)


def counts(question: SavedQuestion, runs: QuerySet) -> Counter:
    """experiment id -> runs of `runs` the question matches."""
    found = matching_runs(question, runs)
    return Counter(Run.objects.filter(pk__in=list(found)).values_list("experiment_id", flat=True))


def search_filters(question: SavedQuestion) -> Filters:
    return Filters(**{k: v for k, v in question.filters.items() if k in Filters.__dataclass_fields__})


def _with_a_matching_step(question: SavedQuestion, runs: QuerySet) -> dict[int, int | None]:
    """A run matches at its first candidate step that passes the exact check. Candidates are read in
    order (a rare term has few: on PostgreSQL, where the index names at most READ_FIRST, they are listed
    by a statement of their own, engines.listed_when_few); past READ_FIRST of them the term is common,
    and for the runs not read yet the database gives each run's first candidate instead (an aggregate,
    no text), which usually settles the run without reading the rest of its steps. On PostgreSQL a
    term the index names more rows for is first looked for in each run's first steps (_probed) where
    a sample of the runs finds it there in most of them: the planner reads such a term's candidates
    through its GIN indexes whole, to order or group them (`train.csv` at 2M steps: 17 s)."""
    parsed, filters = parse(question.query), search_filters(question)
    scoped = filters.runs(runs)
    rows = StepText.objects.filter(run__in=scoped.values("pk"))
    if filters.kind:
        rows = rows.filter(kind=filters.kind)
    by = engines.listing(parsed, READ_FIRST)
    once = engines.listed_when_few(parsed, READ_FIRST, by)
    candidates = engines.narrow(rows, parsed, once=once, by=by)
    found: dict[int, int | None] = {}
    if connection.vendor == "postgresql" and not once:
        ids = list(scoped.order_by("pk").values_list("pk", flat=True).distinct())
        found = _probed(ids[:SAMPLE_RUNS], parsed, filters.kind)
        if len(found) >= PROBE_WHEN_SETTLED * len(ids[:SAMPLE_RUNS]):
            found.update(_probed(ids[SAMPLE_RUNS:], parsed, filters.kind))
            unsettled = [pk for pk in ids if pk not in found]
            if unsettled:
                found.update(_by_first_candidates(candidates.filter(run_id__in=unsettled), parsed))
            return found
    read, last = _first_matches(_in_order(candidates)[:READ_FIRST], parsed, found)
    if read == READ_FIRST:  # the last run read may have more candidates: unless settled, it is looked at again
        rest = candidates.filter(run_id__gt=last) if last in found else candidates.filter(run_id__gte=last)
        found.update(_by_first_candidates(rest, parsed))
    return found


def _probed(ids: list[int], parsed: Query, kind: str) -> dict[int, int | None]:
    """PostgreSQL: the runs of `ids` that their first PROBE steps settle: each run's first candidate
    among them (engines.first_in_each_run) checked; the caller is left the runs it does not settle."""
    found: dict[int, int | None] = {}
    for start in range(0, len(ids), CHUNK):
        rows = engines.first_in_each_run(ids[start : start + CHUNK], parsed, PROBE, kind)
        found.update((run_id, index) for run_id, index, text in rows if parsed.spans(text) is not None)
    return found


def _by_first_candidates(candidates: QuerySet, parsed: Query) -> dict[int, int | None]:
    """Each run's first candidate checked (one aggregate, one read); the runs it does not settle have
    their candidates read in order."""
    first = dict(candidates.order_by().values("run_id").annotate(first=Min("index")).values_list("run_id", "first"))
    found: dict[int, int | None] = {}
    texts = StepText.objects.filter(run_id__in=list(first), index__in=set(first.values()))
    for run_id, index, text in texts.values_list("run_id", "index", "text").iterator(chunk_size=CHUNK):
        if first[run_id] == index and parsed.spans(text) is not None:
            found[run_id] = index
    unsettled = [run_id for run_id in first if run_id not in found]
    if not unsettled:
        return found
    _first_matches(_in_order(candidates.filter(run_id__in=unsettled)), parsed, found)
    return found


def _in_order(candidates: QuerySet) -> QuerySet:
    return candidates.order_by("run_id", "index").values_list("run_id", "index", "text")


def _first_matches(rows: QuerySet, parsed: Query, found: dict[int, int | None]) -> tuple[int, int]:
    """Adds each run's first matching row to `found`; (rows read, the last run read)."""
    read, last = 0, 0
    for run_id, index, text in rows.iterator(chunk_size=CHUNK):
        read, last = read + 1, run_id
        if run_id not in found and parsed.spans(text) is not None:
            found[run_id] = index
    return read, last


def _failed_with(question: SavedQuestion, runs: QuerySet) -> dict[int, int | None]:
    graded = list(runs.filter(status=Run.Status.GRADED).only(*FAILURE_FIELDS))
    return {pk: found.step for pk, found in signatures(graded).items() if question.signature_matches(found.label)}


LISTED = 500  # runs listed per question and experiment (the count is of all of them)


def scoped_runs(user, experiment: int | list[int], split: str = "") -> QuerySet:
    """The experiment's (or experiments') runs this user may see, on the split's competitions when one is given."""
    ids = experiment if isinstance(experiment, list) else [experiment]
    runs = Run.objects.visible_to(user).filter(experiment_id__in=ids)
    if not split:
        return runs
    return runs.filter(competition__splits__slug=split, competition__splits__benchmark__slug="mle-bench")


def listed(found: dict[int, int | None]) -> list[tuple[int, int | None, str]]:
    """(run id, step, the run's page at that step), oldest run first, at most LISTED."""
    return [
        (run_id, step, reverse("run-detail", args=[run_id]) + ("" if step is None else f"#step-{step}"))
        for run_id, step in sorted(found.items())[:LISTED]
    ]

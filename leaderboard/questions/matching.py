"""Which runs a saved question matches, among runs the caller already narrowed to what its viewer
may see, and the counts per experiment that the experiment comparison shows.

A search question matches a run when any of its steps matches (the engine narrows, the query's exact
check decides, as in search.service); a failure question when the run failed with a matching
signature (failures.signatures). Each returns the step to link: the first matching step, or the
error step the signature was read from."""

from __future__ import annotations

from collections import Counter

from django.db.models import QuerySet
from django.urls import reverse

from leaderboard.failures.breakdown import FAILURE_FIELDS
from leaderboard.failures.signatures import signatures
from leaderboard.models import Run
from leaderboard.questions.models import SavedQuestion
from leaderboard.search import engines
from leaderboard.search.models import StepText
from leaderboard.search.query import parse
from leaderboard.search.service import Filters

CHUNK = 1000


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
    parsed, filters = parse(question.query), search_filters(question)
    rows = StepText.objects.filter(run__in=filters.runs(runs).values("pk"))
    if filters.kind:
        rows = rows.filter(kind=filters.kind)
    candidates = engines.narrow(rows, parsed).order_by("run_id", "index").values_list("run_id", "index", "text")
    found: dict[int, int | None] = {}
    for run_id, index, text in candidates.iterator(chunk_size=CHUNK):
        if run_id not in found and parsed.spans(text) is not None:
            found[run_id] = index
    return found


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

"""The runs index (`/runs/`): every run a reader may see, filtered, sorted and paged, with two of them
picked to compare. `/compare/` without two runs shows this page as its picker."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Paginator
from django.db.models import F, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from leaderboard.analysis import stats
from leaderboard.models import Competition, Run, Split

PAGE_SIZE = 50
# sort parameter -> order_by; rows without a value (no score, no human placing) go last either way
SORTS = {
    "-created": ("-created_at", "-id"),
    "created": ("created_at", "id"),
    "-score": (F("score").desc(nulls_last=True), "-id"),
    "score": (F("score").asc(nulls_last=True), "-id"),
    "-beats": (F("beats_human_pct").desc(nulls_last=True), "-id"),
    "beats": (F("beats_human_pct").asc(nulls_last=True), "-id"),
    "competition": ("competition__slug", "task_name", "-id"),
    "agent": ("experiment__agent__name", "experiment__model__name", "-id"),
}
SORT_LABELS = {
    "best": "best score first (in the competition's direction)", "-created": "newest first",
    "created": "oldest first", "-score": "score, high to low",
    "score": "score, low to high", "-beats": "most humans beaten", "beats": "fewest humans beaten",
    "competition": "competition", "agent": "agent and model",
}


@dataclass(frozen=True)
class RunFilters:
    competition: str = ""
    agent: str = ""
    model: str = ""
    owner: str = ""
    status: str = ""
    verification: str = ""
    split: str = ""
    sort: str = "-created"

    @classmethod
    def from_query(cls, query) -> RunFilters:
        values = {name: query.get(name, "").strip() for name in cls.__dataclass_fields__}
        if values["sort"] not in SORT_LABELS:
            values["sort"] = "-created"
        return cls(**values)


def _verification(value: str) -> Q:
    """Demo runs are graded here, but against synthetic answers: never among the verified ones."""
    if value not in Run.Verification.values:
        return Q()
    return Q(verification=value, is_demo=False) if value == Run.Verification.VERIFIED else Q(verification=value)


def filtered_runs(*, user, filters: RunFilters) -> QuerySet[Run]:
    runs = Run.objects.visible_to(user).select_related(
        "competition", "experiment__agent", "experiment__model", "owner")
    runs = stats.filter_runs(runs, stats.LeaderboardFilters(agent=filters.agent, model=filters.model))
    exact = {"competition": Q(competition__slug=filters.competition) | Q(task_name=filters.competition),
             "owner": Q(owner__username=filters.owner),
             "status": Q(status=filters.status) if filters.status in Run.Status.values else Q(),
             "verification": _verification(filters.verification)}
    for name, condition in exact.items():
        if getattr(filters, name):
            runs = runs.filter(condition)
    if filters.split:
        try:
            split = stats.resolve_split(filters.split)
        except Split.DoesNotExist:
            return runs.none()
        runs = runs.filter(competition__in=split.competitions.all())
    if filters.sort == "best":
        lower = Competition.objects.filter(slug=filters.competition).values_list("is_lower_better", flat=True).first()
        return runs.order_by(*SORTS["score" if lower else "-score"])
    return runs.order_by(*SORTS[filters.sort])


def runs_index(request: HttpRequest, notice: str = "") -> HttpResponse:
    filters = RunFilters.from_query(request.GET)
    page = Paginator(filtered_runs(user=request.user, filters=filters), PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    query.pop("runs", None)
    return render(request, "leaderboard/runs_index.html", {
        "page": page, "filters": filters, "query_string": query.urlencode(), "notice": notice,
        "statuses": Run.Status.choices, "verifications": Run.Verification.choices,
        "sorts": SORT_LABELS.items(), "split_choices": stats.split_choices(),
        "competitions": Competition.objects.values_list("slug", flat=True),
        "picked": [p for p in request.GET.getlist("runs") if p.isdigit()],
    })


def best_runs(*, user, competition: Competition, limit: int = 25) -> list[Run]:
    """A competition's runs, best score first in the metric's direction, runs without a score last."""
    score = F("score").asc(nulls_last=True) if competition.is_lower_better else F("score").desc(nulls_last=True)
    runs = (Run.objects.visible_to(user).filter(competition=competition)
            .select_related("experiment__agent", "experiment__model", "competition")
            .order_by(score, "-created_at", "-id"))
    return list(runs[:limit])

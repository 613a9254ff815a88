"""/search/: the same search as a page, with its filters in the URL."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from leaderboard.lib import chat
from leaderboard.models import Competition, Run, StepKind
from leaderboard.search.params import MEDAL_CHOICES, SearchParams
from leaderboard.search.query import QueryError
from leaderboard.search.service import search


def search_page(request: HttpRequest) -> HttpResponse:
    params = SearchParams(data=request.GET)
    page, error = None, ""
    if request.GET.get("q"):
        if params.is_valid():
            try:
                page = search(user=request.user, query=params.validated_data["q"], filters=params.filters(),
                              cursor=params.validated_data["cursor"])
            except QueryError as exc:
                error = str(exc)
        else:
            error = "; ".join(f"{k}: {' '.join(str(m) for m in v)}" for k, v in params.errors.items())
    query = request.GET.copy()
    query.pop("cursor", None)
    return render(request, "leaderboard/search.html", {
        "page": page, "error": error, "values": request.GET, "query_string": query.urlencode(),
        "kinds": StepKind.choices, "medals": MEDAL_CHOICES, "verifications": Run.Verification.choices,
        "competitions": Competition.objects.values_list("slug", flat=True), "llm_summary": chat.configured(),
    }, status=400 if error else 200)

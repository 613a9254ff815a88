"""The side-by-side page of two code bases' matching regions: a run and another run it was matched
with, or a run and a reference file of its competition. Both must be visible to the reader (a
private run of someone else is a 404, as everywhere)."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from leaderboard.trust import similarity
from leaderboard.trust.similarity.models import ReferenceCode
from leaderboard.web.visibility import visible_run


def run_similar(request: HttpRequest, pk: int, other: int) -> HttpResponse:
    run, theirs = visible_run(request, pk), visible_run(request, other)
    if run.pk == theirs.pk:
        raise Http404("a run is not compared with itself")
    return render(request, "leaderboard/trust/similar_compare.html", {
        "run": run, "other_run": theirs, "comparison": similarity.side_by_side(run, other=theirs),
        "common_runs": settings.SIMILARITY_COMMON_RUNS})


def run_similar_reference(request: HttpRequest, pk: int, reference: int) -> HttpResponse:
    run = visible_run(request, pk)
    ref = get_object_or_404(ReferenceCode, pk=reference, competition_id=run.competition_id)
    return render(request, "leaderboard/trust/similar_compare.html", {
        "run": run, "reference": ref, "comparison": similarity.side_by_side(run, reference=ref)})

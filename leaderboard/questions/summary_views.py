"""/questions/summaries/: ask the site's model what a selection of runs did wrong, and read the
replies you asked for (each with its cost). Off, with the reason, when no model is configured."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from leaderboard.lib import chat
from leaderboard.models import Run
from leaderboard.questions import summaries
from leaderboard.questions.models import RunSummary, SavedQuestion
from leaderboard.questions.serializers import SelectionParams

LISTED = 20


@login_required
def summaries_page(request: HttpRequest) -> HttpResponse:
    values = request.POST if request.method == "POST" else request.GET
    error, status = "", 200
    if request.method == "POST":
        params = SelectionParams(data=request.POST)
        if not params.is_valid():
            error, status = "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in params.errors.items()), 400
        else:
            try:
                selection = summaries.select(
                    user=request.user, question=params.question_for(request.user), filters=params.filters()
                )
                return redirect("summary-detail", summaries.summarise(user=request.user, selection=selection).pk)
            except summaries.SummaryRefused as exc:
                error, status = str(exc), exc.status
    return render(
        request,
        "leaderboard/summaries.html",
        {
            "configured": chat.configured(),
            "off": summaries.OFF,
            "error": error,
            "values": values,
            "max_runs": settings.SUMMARY_MAX_RUNS,
            "questions": SavedQuestion.objects.visible_to(request.user),
            "summaries": RunSummary.objects.filter(owner_id=request.user.pk)[:LISTED],
        },
        status=status,
    )


@login_required
def summary_detail(request: HttpRequest, pk: int) -> HttpResponse:
    summary = get_object_or_404(RunSummary, pk=pk, owner=request.user)
    visible = set(Run.objects.visible_to(request.user).filter(pk__in=summary.runs).values_list("pk", flat=True))
    return render(
        request,
        "leaderboard/summary.html",
        {
            "summary": summary,
            "reply_html": summaries.reply_html(summary, request.user),
            "runs": [pk for pk in summary.runs if pk in visible],
        },
    )

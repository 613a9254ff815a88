from django.db.models import Q
from django.shortcuts import get_object_or_404, render

from leaderboard.charts import human_leaderboard_figure
from leaderboard.models import Competition, Split


def competition_list(request):
    competitions = Competition.objects.for_list()
    split_slug = request.GET.get("split", "")
    query = request.GET.get("q", "").strip()
    if split_slug:
        competitions = competitions.filter(splits__slug=split_slug)
    if query:
        competitions = competitions.filter(Q(slug__icontains=query) | Q(name__icontains=query))
    return render(request, "leaderboard/competition_list.html", {
        "competitions": competitions,
        "splits": Split.objects.all(),
        "split_slug": split_slug,
        "query": query,
    })


def competition_detail(request, slug: str):
    competition = get_object_or_404(Competition.objects.for_list(), slug=slug)
    thresholds = competition.thresholds()
    figure = None
    if thresholds is not None:
        scores = list(competition.human_scores.values_list("score", flat=True))
        figure = human_leaderboard_figure(scores, thresholds)
    return render(request, "leaderboard/competition_detail.html", {
        "competition": competition,
        "thresholds": thresholds,
        "figure": figure,
    })

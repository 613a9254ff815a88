"""Agent runs placed among Kaggle's human teams: every visible run as a mark on a competition's human
distribution, and an experiment's distribution of the share of human teams beaten."""

from __future__ import annotations

from django.urls import reverse

from leaderboard.analysis import paired
from leaderboard.models import Competition, Run

MAX_MARKS = 1000


def run_marks(*, competition: Competition, user) -> list[dict]:
    """The latest MAX_MARKS visible graded runs with a valid score: score, label and link."""
    runs = (Run.objects.visible_to(user)
            .filter(competition=competition, status=Run.Status.GRADED, valid_submission=True, score__isnull=False)
            .select_related("experiment__agent", "experiment__model").order_by("-created_at", "-id")[:MAX_MARKS])
    return [{"score": run.score, "url": reverse("run-detail", args=[run.pk]), "medal": run.medals().label,
             "label": f"{run.experiment.agent} + {run.experiment.model.name} · seed {run.seed} · run {run.pk}"}
            for run in runs]


def beaten_shares(runs: list[Run]) -> list[tuple[str, float]]:
    """(competition slug, mean % of human teams beaten over the latest run of each seed) for every
    competition with a human leaderboard where some run has a placing; `runs` oldest first, with
    their competitions loaded."""
    graded = [r for r in runs if r.status == Run.Status.GRADED and r.competition_id is not None
              and r.competition.has_human_baseline]
    slugs = {r.competition_id: r.competition.slug for r in graded}
    sides = paired.per_competition(graded)
    return sorted((slugs[c], side.beats_humans) for c, side in sides.items() if side.beats_humans is not None)

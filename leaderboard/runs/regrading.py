"""Grading runs again once their competition's answers are registered (`manage.py regrade`).

A run uploaded before the site had a competition's answers waits (Run.Status.WAITING). Each one is
moved back to pending with a conditional UPDATE, so a worker that grades it at the same moment and
this command never both do, and is then graded in this process by the same task a worker runs.
"""

from __future__ import annotations

from django.db.models import QuerySet

from leaderboard.models import Run
from webapp import queue


def runs_to_regrade(*, competition: str | None = None, include_failed: bool = False) -> QuerySet[Run]:
    statuses = [Run.Status.WAITING, *([Run.Status.FAILED] if include_failed else [])]
    runs = Run.objects.filter(status__in=statuses, competition__isnull=False)
    if competition:
        runs = runs.filter(competition__slug=competition)
    return runs.order_by("id")


def regrade(*, run_ids: list[int]) -> dict[int, str]:
    """Grade each run again; returns the status each one ended in (runs claimed elsewhere are skipped)."""
    outcome = {}
    for run_id in run_ids:
        moved = Run.objects.filter(pk=run_id, status__in=[Run.Status.WAITING, Run.Status.FAILED]).update(
            status=Run.Status.PENDING, grading_error="")
        if moved:
            queue.run_here(queue.GRADE_RUN, [run_id])
        outcome[run_id] = Run.objects.values_list("status", flat=True).get(pk=run_id)
    return outcome

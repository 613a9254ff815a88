"""What a request may see of one run: the run itself (private runs of others are a 404) and the step
kinds it asks for. The replay page, its file downloads, the similarity page and the steps API all ask
here, so the rule is one and sits below both the pages and the API."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404

from leaderboard.models import Run, StepKind


def visible_run(request: HttpRequest, pk: int) -> Run:
    """The run if this user may see it; private runs of others are a 404, never a 403."""
    runs = Run.objects.visible_to(request.user).select_related(
        "competition",
        "experiment__agent",
        "experiment__model",
        "experiment__owner",
        "experiment__team",
        "job_task__job",  # the live panel of a run a runner is working on, in the same query
    )
    return get_object_or_404(runs, pk=pk)


def parse_kinds(raw: str | None) -> list[str] | None:
    """`type=code,command` -> those kinds; no parameter -> None (no filter); unknown kinds match nothing."""
    if not raw:
        return None
    return [k for k in (part.strip() for part in raw.split(",")) if k in StepKind.values]

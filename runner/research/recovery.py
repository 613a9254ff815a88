"""The research baselines' part of the sweep (webapp.maintenance): a baseline asked for while the
broker was down is asked for again, and one whose runner died while the starter ran goes back to
pending and is asked for again. Conditional UPDATEs on the state read, so concurrent sweepers are safe.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from leaderboard.models import ResearchTask

MARGIN_S = 300.0  # past the starter's and the eval's limits before a running baseline counts as lost


def sweep_baselines() -> dict[str, int]:
    now = timezone.now()
    lost = 0
    for task in ResearchTask.objects.filter(baseline_status=ResearchTask.Baseline.RUNNING):
        limit = timedelta(seconds=task.time_limit_s + settings.RESEARCH_EVAL_TIME_LIMIT_S + MARGIN_S)
        if task.baseline_at is not None and task.baseline_at < now - limit:
            lost += ResearchTask.objects.filter(pk=task.pk, baseline_status=ResearchTask.Baseline.RUNNING,
                                                baseline_at=task.baseline_at).update(
                baseline_status=ResearchTask.Baseline.PENDING, baseline_at=now - _stale(),
                baseline_error="the runner computing it was lost; asked again")
    published = 0
    stale = ResearchTask.objects.filter(baseline_status=ResearchTask.Baseline.PENDING, baseline_at__lte=now - _stale())
    for pk, at in list(stale.values_list("pk", "baseline_at")):
        if ResearchTask.objects.filter(pk=pk, baseline_status=ResearchTask.Baseline.PENDING, baseline_at=at) \
                .update(baseline_at=now):
            published += publish(pk)
    return {"baselines_recovered": lost, "baselines_published": published}


def publish(task_id: int) -> int:
    from runner.tasks import compute_baseline
    from webapp.celery import publish as send

    sent = send(compute_baseline, [task_id], what=f"the baseline of research task {task_id}",
                queue=settings.RESEARCH_BASELINE_QUEUE)
    return int(sent is not None)


def _stale() -> timedelta:
    return timedelta(seconds=settings.STALE_PENDING_S)

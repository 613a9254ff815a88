"""The research baselines' part of the sweep (webapp.maintenance).

- An expired claim (the runner computing it died: its lease, renewed while the starter and the eval
  run, ran out) goes back to pending and is asked for again at once, until
  RESEARCH_BASELINE_MAX_ATTEMPTS claims were lost; then the baseline fails with the reason
  (webapp.leases.sweep_expired).
- A pending baseline nobody picked up (asked for while the broker was down, or its message lost) is
  asked for again once it has waited STALE_PENDING_S, then at most once per STALE_PENDING_S.

Conditional UPDATEs on the state read, so concurrent sweepers are safe.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from leaderboard.models import ResearchTask
from webapp import leases, queue


def sweep_baselines() -> dict[str, int]:
    from runner.research.baseline import BASELINES

    now = timezone.now()
    expired = leases.sweep_expired(
        BASELINES, max_attempts=settings.RESEARCH_BASELINE_MAX_ATTEMPTS,
        # baseline_at as if asked for STALE_PENDING_S ago, so the step below asks again in this sweep
        retry=lambda task: {"baseline_at": now - _stale(), "baseline_error": (
            f"baseline attempt {task.baseline_attempts} was interrupted (the runner computing it was lost); "
            "asked again")},
        give_up=lambda task: {"baseline_at": now, "baseline_error": (
            f"the baseline was interrupted {task.baseline_attempts} times (the runner computing it was lost); "
            "gave up: import the task again, or give it with --baseline-score")},
        rows=ResearchTask.objects.only("pk", "baseline_status", "baseline_owner", "baseline_attempts"),
    )
    return {"baselines_recovered": expired["retried"], "baselines_failed": expired["failed"],
            "baselines_published": _publish_stale(now)}


def _publish_stale(now) -> int:
    published = 0
    stale = ResearchTask.objects.filter(baseline_status=ResearchTask.Baseline.PENDING, baseline_at__lte=now - _stale())
    for pk, at in list(stale.values_list("pk", "baseline_at")):
        # Move baseline_at first: of several sweepers, only the one whose UPDATE matched publishes.
        if ResearchTask.objects.filter(pk=pk, baseline_status=ResearchTask.Baseline.PENDING, baseline_at=at) \
                .update(baseline_at=now):
            published += publish(pk)
    return published


def publish(task_id: int) -> int:
    sent = queue.publish(queue.COMPUTE_BASELINE, [task_id], what=f"the baseline of research task {task_id}",
                queue=settings.RESEARCH_BASELINE_QUEUE)
    return int(sent is not None)


def _stale() -> timedelta:
    return timedelta(seconds=settings.STALE_PENDING_S)

"""The Celery task that scans a run (leaderboard.trust.review); imported by leaderboard/tasks.py so
every worker registers it. A scan only reads the run and writes its findings, so running it twice is
harmless; a lost message leaves the run unscanned until the next scan (`manage.py review_runs`)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from leaderboard.models import Run
from webapp import queue

log = logging.getLogger(__name__)

TRANSIENT_ERRORS = (OSError, TimeoutError, ConnectionError, OperationalError)
MAX_RETRIES = 3


@shared_task(name=queue.REVIEW_RUN, bind=True, max_retries=MAX_RETRIES, acks_late=True,
             soft_time_limit=min(settings.CELERY_TASK_SOFT_TIME_LIMIT, 900),
             time_limit=min(settings.CELERY_TASK_TIME_LIMIT, 960))
def review_run_task(self, run_id: int) -> str:
    """Scan one run; returns how many findings it has (or why nothing was done)."""
    from leaderboard.trust.review import review_run

    try:
        return f"{len(review_run(run_id))} findings"
    except Run.DoesNotExist:
        return "no such run"
    except TRANSIENT_ERRORS as exc:
        if self.request.retries >= MAX_RETRIES:
            log.warning("run %s: the rule checks failed after %s retries: %s", run_id, MAX_RETRIES, exc)
            return "failed"
        raise self.retry(exc=exc, countdown=10 * 2**self.request.retries) from exc

"""The Celery tasks of a site's worker on the runner side: research tasks' starter baselines and the
scoring of research traces (eval.py, where the tasks' scripts are), and the sweep. A job's task never
runs here: runners attached by URL and token claim it through the runner API (runner.api_v1).

Acknowledged late and rejected back to the queue if the worker dies; each is bounded by its own time
limit (the starter's, RESEARCH_EVAL_TIME_LIMIT_S), not Celery's, which would kill the worker process.
"""

from __future__ import annotations

import logging
import os
from functools import cache

from celery import shared_task

from runner.backends import Backend, get_backend
from webapp import queue

log = logging.getLogger(__name__)


@cache
def current_backend() -> Backend:
    return get_backend(os.environ.get("MEDALBOARD_RUNNER_BACKEND", "local"))


@shared_task(name=queue.COMPUTE_BASELINE, acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=None, time_limit=None)
def compute_baseline(task_id: int) -> str:
    """A research task's starter baseline (runner.research.baseline), asked for by import_research_tasks by
    name; the starter's own time limit bounds it."""
    from runner.research.baseline import compute_baseline as run_starter

    return run_starter(task_id, backend=current_backend())


@shared_task(name=queue.SCORE_TRACE, acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=None, time_limit=None)
def score_trace(run_id: int) -> str:
    """An imported MLAgentBench trace's step files scored by its task's eval.py (runner.research.traces),
    asked for by the site by name; each eval is bounded by RESEARCH_EVAL_TIME_LIMIT_S."""
    from runner.research.traces import score_trace as score

    return score(run_id, backend=current_backend())


@shared_task(name=queue.SWEEP)
def sweep() -> dict:
    """The recovery sweep as a task, for deployments that also schedule it with celery beat."""
    from webapp.maintenance import sweep as run_sweep

    return run_sweep()

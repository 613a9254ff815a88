"""The Celery task that runs one job task (competition x seed) on the runner that takes it.

Acknowledged late and rejected back to the queue if the worker dies; a duplicate delivery finds the
task already claimed and does nothing. The wall clock is enforced by the supervisor, not by Celery's
time limits (which would kill the worker process mid-run), so this task has none.
"""

from __future__ import annotations

import logging
import os
from functools import cache

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from leaderboard.runs import job_runs
from runner.backends import Backend, BackendUnavailable, get_backend
from runner.jobs import task_leases
from runner.jobs.api_kinds import api_takes_id
from runner.models import JobTask, Runner
from webapp import queue

log = logging.getLogger(__name__)
BACKEND_RETRIES = 6  # engine down: retried after 5, 10, 20, 40, 80, 160 s, then failed
GPU_WAIT_S = 5
DRAIN_BOUNCE_S = 10


def runner_name() -> str:
    return os.environ.get("MEDALBOARD_RUNNER_NAME", "")


def current_runner() -> Runner | None:
    name = runner_name()
    return Runner.objects.filter(name=name).first() if name else None


@cache
def current_backend() -> Backend:
    return get_backend(os.environ.get("MEDALBOARD_RUNNER_BACKEND", "local"))


@shared_task(name=queue.RUN_JOB_TASK, bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None,
             soft_time_limit=None, time_limit=None)
def run_job_task(self, task_id: int) -> str:
    """Claim the task, run it, end it; returns the task's final status or why nothing was done."""
    from runner.execution.supervisor import execute

    runner = current_runner()
    if runner is not None and runner.status == Runner.Status.DRAINING:
        raise self.retry(countdown=DRAIN_BOUNCE_S)  # back to the queue, for a runner that is not draining
    if runner is not None and not runner.meets(_requirements(task_id)):
        raise self.retry(countdown=DRAIN_BOUNCE_S)  # for a runner that starts sandboxes as the job asks
    if runner is not None and runner.leaves_api_kinds and api_takes_id(task_id):
        return "left to a runner attached over the runner API"  # it claims from the database, not this message
    held = task_leases.claim(task_id, runner)
    if held is None:
        return "not queued"
    try:
        return execute(held, runner=runner, backend=current_backend()).status
    except task_leases.LeaseLost:
        log.warning("job task %s: lease lost; another attempt owns it", task_id)
        return "lease lost"
    except task_leases.NoFreeGpus:
        task_leases.release(held)
        raise self.retry(countdown=GPU_WAIT_S) from None
    except BackendUnavailable as exc:  # execute() handed the task back to the queue
        if self.request.retries >= BACKEND_RETRIES:
            return _fail_queued(task_id, f"{current_backend().name} unavailable after {BACKEND_RETRIES} retries: {exc}")
        countdown = 5 * 2**self.request.retries
        JobTask.objects.filter(pk=task_id, status=JobTask.Status.QUEUED).update(
            error=f"{current_backend().name} unavailable: {exc}; retry {self.request.retries + 1} "
                  f"of {BACKEND_RETRIES} in {countdown} s")
        raise self.retry(countdown=countdown) from None
    except Exception as exc:  # noqa: BLE001 - a bug or a permanent error: the task fails, saying why
        log.exception("job task %s failed", task_id)
        return _fail_held(held, f"{exc.__class__.__name__}: {exc}")


def _requirements(task_id: int) -> dict:
    return JobTask.objects.filter(pk=task_id).values_list("job__requirements", flat=True).first() or {}


def _fail_queued(task_id: int, why: str) -> str:
    JobTask.objects.filter(pk=task_id, status=JobTask.Status.QUEUED).update(
        status=JobTask.Status.FAILED, error=why[:5000], finished_at=timezone.now()
    )
    _fail_run(task_id, why)
    return JobTask.Status.FAILED


def _fail_held(held: task_leases.Claim, why: str) -> str:
    try:
        with transaction.atomic():
            task_leases.finish(held, JobTask.Status.FAILED, error=why[:5000])
            _fail_run(held.pk, why)
    except task_leases.LeaseLost:
        return "lease lost"
    return JobTask.Status.FAILED


def _fail_run(task_id: int, why: str) -> None:
    run_id = JobTask.objects.values_list("run_id", flat=True).get(pk=task_id)
    if run_id is not None:
        job_runs.fail_job_run(run_id, why)


@shared_task(name=queue.COMPUTE_BASELINE, acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=None, time_limit=None)
def compute_baseline(task_id: int) -> str:
    """A research task's starter baseline (runner.research.baseline), asked for by import_research_tasks by
    name; the starter's own time limit bounds it, as the supervisor bounds a job."""
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

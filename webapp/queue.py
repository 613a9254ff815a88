"""The one way the site and the runner send work to Celery: by task name, never by importing a task.

A module that wants work done names the task (the names below are the whole list of what is ever
queued) and calls `publish`, or `publish_on_commit` when the row it names is being written in the
open transaction. The `tasks.py` modules are thin entry points that workers load; nothing imports
them as a library, so the write side and the runner never import each other through their tasks.

This module imports nothing of the project: the Celery app is the process's default one, set by
webapp/celery.py (`app.set_default()`), which Django loads before any of this runs."""

from __future__ import annotations

import logging

from celery import current_app
from django.db import transaction

log = logging.getLogger(__name__)

# Every task the project queues, by the name its worker registers (kept stable: queued messages and
# stored Celery results name them).
GRADE_RUN = "leaderboard.tasks.grade_run"
GRADE_SNAPSHOT = "leaderboard.tasks.grade_snapshot"
IMPORT_INTAKE = "leaderboard.intake.import_intake"
REVIEW_RUN = "leaderboard.trust.review_run"
COMPUTE_BASELINE = "runner.research.compute_baseline"
SCORE_TRACE = "runner.research.score_trace"
SWEEP = "runner.tasks.sweep"


def publish(task_name: str, args: list, *, what: str, **options):
    """Send a task to the broker: its AsyncResult, or None, with one line in the log, if the broker
    cannot be reached. A task this process registers runs in place under CELERY_TASK_ALWAYS_EAGER.

    Every caller keeps its row in the database and a sweep publishes it again, so an outage costs a
    delay, not the work. After a failure the connection pools are replaced: kombu can leave a pooled
    producer without its connection, and every later send would fail on it (AttributeError) even
    once the broker is back."""
    try:
        return send(task_name, args, **options)
    except Exception as exc:  # noqa: BLE001 - whatever the transport raises, the row is kept
        log.warning("broker unavailable: could not enqueue %s (%s); it is sent again later", what, one_line(exc))
        reset_connections()
        return None


def publish_on_commit(task_name: str, args: list, *, what: str, **options) -> None:
    """`publish` once the open transaction commits (at once outside one): a worker never looks for a
    row that is not there yet."""
    transaction.on_commit(lambda: publish(task_name, args, what=what, **options))


def run_here(task_name: str, args: list):
    """Run a task of this process in this process (a command's --now), as its worker would: the result."""
    return current_app.tasks[task_name].apply(args=args)


def send(task_name: str, args: list, **options):
    """Send without catching a broker failure (a sweep that counts what it sent wants the exception)."""
    return current_app.signature(task_name).apply_async(args=args, **options)


def reset_connections() -> None:
    """Make the next send open new broker connections. The old pools are dropped, not closed: in a
    worker the consumer may still hold them, and closing them under it stops the worker."""
    app = current_app._get_current_object()
    app._pool = None
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None


def one_line(exc: BaseException) -> str:
    """An exception as one short log line: its class and the first line of its message."""
    lines = str(exc).splitlines()
    return f"{exc.__class__.__name__}: {lines[0][:200]}" if lines else exc.__class__.__name__

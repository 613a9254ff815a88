"""Which job tasks a runner attached over the runner API (runner.api_v1) takes, and which stay with
Celery runners until it takes every kind.

`make run` starts both: a runner that talks to its own site over the loopback through the runner API
(the one code path a machine elsewhere takes too), and, for the kinds that path does not serve yet, a
Celery runner started with `--leave-api-kinds`, which takes nothing the API runner would. The site's
claim (runner.api_v1.claims) decides what an API runner takes; `api_takes` says the same per task, and
tests/runner/test_api_kinds.py holds the two together, so that once the claim serves a kind listed in
CELERY_ONLY this module must follow (and once it lists nothing, `make run` needs no Celery runner for
jobs: its Celery worker is then the site's grading worker only).
"""

from __future__ import annotations

from runner.jobs.queues import GRADING_QUEUE
from runner.models import JobTask, Runner

# The kinds a runner attached over the API does not take yet, in the words the runners page uses: none
# since the remote MLE-bench-packaged agents and research tasks merged (a packaged agent still needs a
# Docker runner, which the claim checks with the runner's images, as a Celery runner's queue would).
CELERY_ONLY: tuple[str, ...] = ()


def api_takes(task: JobTask) -> bool:
    """Whether a runner attached over the runner API takes this kind of task (its hardware, backend
    and images aside): every kind, as the site's claim excludes none by kind."""
    return True


def api_takes_id(task_id: int) -> bool:
    task = JobTask.objects.select_related("job__agent", "competition").filter(pk=task_id).first()
    return task is not None and api_takes(task)


def takes(runner: Runner) -> str:
    """What a runner takes, in words (the runners page)."""
    if runner.token_hash:
        return "tasks over the runner API: every kind" + (" but " + " and ".join(CELERY_ONLY) if CELERY_ONLY else "")
    grading = ", and grading" if GRADING_QUEUE in (runner.queues or []) else ""
    if runner.leaves_api_kinds and not CELERY_ONLY:
        return "no job (a runner over the API takes every kind)" + grading
    if runner.leaves_api_kinds:
        return "only " + " and ".join(CELERY_ONLY) + " (a runner over the API takes the rest)" + grading
    return "every task of its queues" + grading

"""A claimed task handed back by its runner before the agent started, because its sandbox engine is
down: back to the queue without spending an attempt, as often as ENGINE_RETRIES, then failed with the
engine's reason. Each claim's release is answered once and given again on a retry."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from leaderboard.runs import job_runs
from runner.api_v1.writes import Refused
from runner.jobs import task_leases
from runner.models import JobTask, RemoteAttempt

ENGINE_RETRIES = 6  # handed back six times (the runner backs off 5 to 160 s between), failed at the seventh
MAX_ERROR_CHARS = 2000


def release(held: task_leases.Claim, error) -> dict:
    """Hand the task back (`error`: why the runner's engine cannot run it); answers the task's status,
    "queued" or, past ENGINE_RETRIES, "failed"."""
    if not isinstance(error, str) or not error.strip():
        raise Refused("error: why the task is handed back, as text")
    error = error.strip()[:MAX_ERROR_CHARS]
    with transaction.atomic():
        state = RemoteAttempt.objects.select_for_update().get(task_id=held.pk, attempt=held.attempt)
        given = next((r["answer"] for r in state.releases if r.get("owner") == held.owner), None)
        if given is not None:
            return given
        if JobTask.objects.filter(pk=held.pk).exclude(agent_started_at=None).exists():
            raise Refused("the agent started: this attempt ends with a finish, not a release", 409)
        task_leases.fence(held)
        answer = _hand_back(held, error, len(state.releases) + 1)
        state.releases = [*state.releases, {"owner": held.owner, "answer": answer}]
        state.save(update_fields=["releases"])
    return answer


def _hand_back(held: task_leases.Claim, error: str, times: int) -> dict:
    task_leases.free_gpus(held.pk)
    if times <= ENGINE_RETRIES:
        task_leases.release(held, error=f"{error}; handed back by its runner ({times} of {ENGINE_RETRIES})")
        return {"status": JobTask.Status.QUEUED, "released": times}
    why = f"{error}; failed after {ENGINE_RETRIES} retries"
    task_leases.release(held)
    JobTask.objects.filter(pk=held.pk, status=JobTask.Status.QUEUED).update(
        status=JobTask.Status.FAILED, error=why[:5000], finished_at=timezone.now()
    )
    run_id = JobTask.objects.values_list("run_id", flat=True).get(pk=held.pk)
    if run_id is not None:
        job_runs.fail_job_run(run_id, why)
    return {"status": JobTask.Status.FAILED, "released": times}

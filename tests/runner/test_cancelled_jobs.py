"""A cancelled job's tasks are never started again: not by the sweep after a lost runner's lease
expired, not by a claim of a task that went back to the queue, not by a real second runner."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboard.models import Run
from runner.jobs import task_leases
from runner.jobs.services import cancel_job
from runner.jobs.sweep import sweep_tasks
from runner.models import Job, JobTask
from tests.job_support import needs_agent_tools, scripted_job, wait_until


@pytest.fixture
def claimed(alice, job_world, django_capture_on_commit_callbacks):
    """A task claimed by the test runner (status running, attempt 1) of a job not yet cancelled."""
    with django_capture_on_commit_callbacks(execute=False):
        task = scripted_job(alice).tasks.get()
    held = task_leases.claim(task.pk, job_world)
    assert held is not None
    return held


def expire(task_id: int) -> None:
    JobTask.objects.filter(pk=task_id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


def test_a_lost_running_task_of_a_cancelled_job_ends_instead_of_going_back_to_the_queue(
    alice, claimed, django_capture_on_commit_callbacks
):
    task = JobTask.objects.get(pk=claimed.pk)
    cancel_job(job=task.job, user=alice)  # the runner is gone: nobody stops the sandbox
    assert JobTask.objects.get(pk=task.pk).status == JobTask.Status.RUNNING
    expire(task.pk)
    with django_capture_on_commit_callbacks(execute=True):
        counts = sweep_tasks()
    task.refresh_from_db()
    assert counts["tasks_cancelled"] == 1 and counts["tasks_requeued"] == 0
    assert task.status == JobTask.Status.CANCELLED and task.attempts == 1 and "cancelled" in task.error
    assert Job.objects.get(pk=task.job_id).status == Job.Status.CANCELLED
    with pytest.raises(task_leases.LeaseLost):  # the lost attempt, if it comes back, writes nothing
        task_leases.fence(claimed)


def test_a_cancel_that_comes_after_the_claim_but_before_the_start_starts_no_sandbox(alice, loopback, monkeypatch):
    from runner.backends.local import LocalBackend
    from runner.remote.data import DataCache

    task = scripted_job(alice).tasks.get()
    real_folder = DataCache.folder

    def cancelled_while_fetching(self, *args, **kwargs):  # the data's download and hash can take minutes
        cancel_job(job=JobTask.objects.get(pk=task.pk).job, user=alice)
        return real_folder(self, *args, **kwargs)

    started = []
    monkeypatch.setattr(DataCache, "folder", cancelled_while_fetching)
    monkeypatch.setattr(LocalBackend, "start", lambda self, spec: started.append(spec))
    outcome = loopback.run_graded(task.pk)
    task.refresh_from_db()
    assert started == [] and outcome.status == task.status == JobTask.Status.CANCELLED
    assert task.run.status == Run.Status.FAILED and task.run.grading_error == "cancelled by its job"
    assert "cancelled before its sandbox started" in task.error and task.agent_started_at is None


def test_a_task_back_in_the_queue_after_the_cancel_is_never_claimed(alice, claimed, job_world):
    task = JobTask.objects.get(pk=claimed.pk)
    Job.objects.filter(pk=task.job_id).update(cancel_requested=True)  # cancelled while it was held...
    assert task_leases.release(claimed)  # ...then handed back (no free GPU, engine down)
    assert task_leases.claim(task.pk, job_world) is None
    task.refresh_from_db()
    assert task.status == JobTask.Status.CANCELLED and task.attempts == 0 and task.lease_owner == ""


def test_the_sweep_ends_queued_tasks_of_a_cancelled_job(alice, job_world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        job = scripted_job(alice, seeds=2)
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)  # e.g. a re-queue raced the cancel
    counts = sweep_tasks()
    assert counts["tasks_cancelled"] == 2
    assert set(job.tasks.values_list("status", flat=True)) == {JobTask.Status.CANCELLED}


@needs_agent_tools
def test_a_runner_killed_after_the_cancel_leaves_a_task_no_other_runner_restarts(
    live_server, transactional_db, alice, job_world, grading_worker, tmp_path
):
    from tests.remote_runner_support import RemoteRunner
    from tests.runner.test_jobs_faults import start_runner

    job = scripted_job(alice, steps=30, sleep=0.5)
    task = job.tasks.get()
    first = start_runner(live_server, tmp_path, "first-runner")
    try:
        wait_until(lambda: Run.objects.filter(job_task=task, n_steps__gte=1).exists(), 60, "streaming", first)
        first.kill9()  # killed before it saw the cancel: its sandbox's lease will expire
    finally:
        RemoteRunner.stop_all()
    cancel_job(job=job, user=alice)
    start_runner(live_server, tmp_path, "second-runner")  # the site's sweep ends the task whose lease expired
    try:
        task = wait_until(lambda: JobTask.objects.filter(pk=task.pk, status__in=JobTask.FINISHED).first(), 60,
                          "ended", grading_worker)
    finally:
        RemoteRunner.stop_all()
    assert task.status == JobTask.Status.CANCELLED and task.attempts == 1, task.error
    assert task.runner.name == "first-runner"  # never claimed by the second runner
    run = Run.objects.get(pk=task.run_id)
    assert run.status == Run.Status.FAILED and "cancelled" in run.grading_error

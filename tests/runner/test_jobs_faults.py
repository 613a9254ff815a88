"""Faults with real processes and engines: a runner attached by URL and token killed with kill -9 mid-run
(the site's sweep re-runs the task with its attempt counted, or fails it with its partial logs; never lost,
never graded twice), a cancel that stops a running sandbox within 10 s, and an engine that is down (the
runner claims nothing and backs off; a task claimed as it went down is handed back with its attempt
unspent, then failed with a clear error)."""

from __future__ import annotations

import pytest

from leaderboard.models import Artifact, Run
from runner.api_v1.releases import ENGINE_RETRIES
from runner.backends import BackendUnavailable
from runner.backends.local import LocalBackend
from runner.models import JobTask
from runner.remote import serve
from tests.job_support import needs_agent_tools, scripted_job, wait_until
from tests.remote_runner_support import RemoteRunner, new_token
from webapp.maintenance import sweep

DOWN = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock"


class FlakyEngine(LocalBackend):
    """A Docker engine that is down (its check fails) until `up`; `dies_at_start`: its check passes but
    every start finds it gone, as when the daemon stops between the runner's check and its start."""

    name = "docker"

    def __init__(self, *, dies_at_start: bool = False) -> None:
        super().__init__()
        self.up, self.dies_at_start, self.checks, self.starts = False, dies_at_start, 0, 0

    def check(self) -> None:
        self.checks += 1
        if not (self.up or self.dies_at_start):
            raise BackendUnavailable(DOWN)

    def start(self, spec):
        self.starts += 1
        if self.dies_at_start:
            raise BackendUnavailable(DOWN)
        return super().start(spec)


@pytest.fixture
def quick_backoff(monkeypatch):
    """The runner's pauses while its engine is down, recorded and short."""
    pauses: list[float] = []
    monkeypatch.setattr(serve, "ENGINE_BACKOFF_S", (0.05, 0.1, 0.2, 0.4))
    real = serve.Slots._engine_pause

    def recorded(self, why: str) -> None:
        pauses.append(serve.ENGINE_BACKOFF_S[min(self.engine_down, len(serve.ENGINE_BACKOFF_S) - 1)])
        real(self, why)

    monkeypatch.setattr(serve.Slots, "_engine_pause", recorded)
    return pauses


@needs_agent_tools
def test_a_runner_whose_engine_is_down_claims_nothing_and_backs_off_until_it_is_back(
    alice, loopback, quick_backoff, caplog
):
    task = scripted_job(alice).tasks.get()
    engine = FlakyEngine()
    with caplog.at_level("WARNING", logger="runner.remote.serve"), loopback.serving(engine, tasks=1) as ended:
        wait_until(lambda: engine.checks >= 5, 30, "checked five times")
        task.refresh_from_db()
        assert task.status == JobTask.Status.QUEUED and task.attempts == 0 and task.runner is None
        assert not ended  # the runner waits for its engine; it does not die of it
        engine.up = True
        wait_until(lambda: ended, 60, "served once the engine was back")
    assert ended == ["stopped"]
    task.refresh_from_db()
    assert task.status == JobTask.Status.SUCCEEDED and task.attempts == 1, task.error
    assert quick_backoff[:4] == [0.05, 0.1, 0.2, 0.4] and quick_backoff[4:] == [0.4] * (len(quick_backoff) - 4)
    assert f"docker unavailable: {DOWN}; not claiming" in caplog.text


@needs_agent_tools
def test_an_engine_gone_at_the_start_hands_the_task_back_then_fails_it_clearly(alice, loopback, quick_backoff):
    task = scripted_job(alice).tasks.get()
    engine = FlakyEngine(dies_at_start=True)
    with loopback.serving(engine, tasks=1) as ended:
        wait_until(lambda: ended, 60, "the task handed back until it failed")
    assert ended == ["stopped"]  # its end came from the site: the runner served it and lives on
    task.refresh_from_db()
    assert task.status == JobTask.Status.FAILED and task.attempts == 0
    assert task.error == f"docker unavailable: {DOWN}; failed after {ENGINE_RETRIES} retries"
    assert engine.starts == ENGINE_RETRIES + 1 and len(quick_backoff) == ENGINE_RETRIES + 1
    assert Run.objects.get(pk=task.run_id).status == Run.Status.FAILED


def start_runner(live_server, tmp_path, name: str) -> RemoteRunner:
    """A runner process attached to the live site by URL and a token of its own (`manage.py runner --site`),
    taking every task it can until it is stopped or killed."""
    return RemoteRunner(live_server.url, new_token(name), tmp_path / name)


@needs_agent_tools
@pytest.mark.parametrize("max_attempts", [2, 1])
def test_kill_9_of_a_runner_mid_run(live_server, transactional_db, alice, job_world, grading_worker, tmp_path,
                                    max_attempts):
    """The site's sweep (its grading worker's) finds the expired lease and hands the task on, or fails it."""
    job = scripted_job(alice, steps=6, sleep=1.0)
    job.tasks.update(max_attempts=max_attempts)
    task = job.tasks.get()
    first = start_runner(live_server, tmp_path, "first-runner")
    try:
        wait_until(lambda: Run.objects.filter(job_task=task, n_steps__gte=2).exists()
                   and JobTask.objects.filter(pk=task.pk, log_tail__contains="step 1").exists(), 60, "streaming", first)
        first.kill9()
    finally:
        RemoteRunner.stop_all()
    task.refresh_from_db()
    assert task.status == JobTask.Status.RUNNING and task.attempts == 1
    second = start_runner(live_server, tmp_path, "second-runner")
    try:
        task = wait_until(lambda: JobTask.objects.filter(pk=task.pk, status__in=JobTask.FINISHED).first(), 90,
                          "finished", second)
        run = wait_until(lambda: Run.objects.filter(pk=task.run_id, status__in=("graded", "failed")).first(), 30,
                         "graded", grading_worker)
    finally:
        RemoteRunner.stop_all()
    if max_attempts == 2:
        assert task.status == JobTask.Status.SUCCEEDED and task.attempts == 2, task.error
        assert task.runner.name == "second-runner"
        assert run.status == Run.Status.GRADED and run.score == pytest.approx(1.0)
        assert run.grading_attempts == 1  # graded once
        assert run.trajectory.n_steps == 6
    else:
        assert task.status == JobTask.Status.FAILED and task.attempts == 1
        assert "lost during attempt 1 of 1" in task.error and "partial logs kept" in task.error
        assert run.status == Run.Status.FAILED and run.grading_attempts == 0  # never graded
        assert run.trajectory.n_steps >= 2  # the steps streamed before the kill are kept
        tail = run.artifacts.get(kind=Artifact.Kind.LOG, name="logs/agent-output-tail.log")
        assert b"step 1" in tail.file.read()
    assert sweep() == {"tasks_requeued": 0, "tasks_failed": 0, "tasks_ended": 0, "tasks_cancelled": 0,
                       "retried": 0, "failed": 0, "requeued_pending": 0,
                       "snapshots_requeued": 0, "intakes_retried": 0, "intakes_failed": 0,
                       "intakes_requeued": 0, "orphan_files_deleted": 0, "scratch_folders_deleted": 0,
                       "baselines_recovered": 0, "baselines_failed": 0, "baselines_published": 0}


@needs_agent_tools
def test_cancelling_a_running_job_stops_its_sandbox_within_10_s(live_server, transactional_db, alice, job_world,
                                                                 tmp_path):
    import time

    from runner.jobs.services import cancel_job

    job = scripted_job(alice, steps=2, sleep=0.2, hang=120, ignore_term=True)  # only SIGKILL ends it
    task = job.tasks.get()
    runner = start_runner(live_server, tmp_path, "cancelled-runner")
    try:
        wait_until(lambda: Run.objects.filter(job_task=task, n_steps__gte=2).exists(), 60, "streaming", runner)
        started = time.monotonic()
        cancel_job(job=job, user=alice)
        task = wait_until(lambda: JobTask.objects.filter(pk=task.pk, status__in=JobTask.FINISHED).first(), 10,
                          "stopped", runner)
        stopped_after = time.monotonic() - started
    finally:
        RemoteRunner.stop_all()
    assert task.status == JobTask.Status.CANCELLED and stopped_after < 10
    run = Run.objects.get(pk=task.run_id)
    assert run.status == Run.Status.FAILED and "cancelled" in run.grading_error
    assert run.trajectory.n_steps == 2  # partial output kept

"""A runner attached by URL and token with several slots (`--slots N`) runs up to N tasks at once, each
with its own lease, and the site holds it to them: the scripted agent waits for a file the test
writes, so the test sees on the site which tasks run at the same time before it lets them end. A
revoked token stops every slot; SIGTERM ends a runner whose slots wait in their claims at once."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from leaderboard.models import Run
from runner.api_v1 import tokens
from runner.client import SiteClient
from runner.models import JobTask, Runner
from tests.job_support import needs_agent_tools, scripted_job, wait_until
from tests.remote_runner_support import RemoteRunner, new_token

pytestmark = [needs_agent_tools, pytest.mark.serial]


def started(job) -> list[JobTask]:
    """The job's tasks whose agent runs now, under a live lease."""
    return list(
        job.tasks.filter(
            status=JobTask.Status.RUNNING, agent_started_at__isnull=False, lease_expires_at__gt=timezone.now()
        )
    )


def waiting_job(alice, release, seeds: int = 2):
    return scripted_job(alice, seeds=seeds, steps=2, sleep=0.05, wait_for=str(release))


def until(check, runner: RemoteRunner, what: str, timeout: float = 90):
    """`check`'s value once true; fails at once, with the runner's log, if the runner exited first."""

    def checked():
        assert runner.process.poll() is None, f"the runner exited before {what}:\n{runner.output()}"
        return check()

    try:
        return wait_until(checked, timeout, what)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- runner log ---\n{runner.output()}") from None


def test_a_runner_with_two_slots_runs_two_tasks_at_once_and_the_site_grades_both(
    live_server, transactional_db, alice, job_world, grading_worker, tmp_path
):
    release = tmp_path / "release"
    job = waiting_job(alice, release)
    runner = RemoteRunner(live_server.url, new_token("remote-slots"), tmp_path / "host", "--slots", "2", "--tasks", "2")
    running = until(lambda: len(started(job)) == 2 and started(job), runner, "both tasks running at once")
    assert {task.runner.name for task in running} == {"remote-slots"}
    assert Runner.objects.get(name="remote-slots").concurrency == 2
    release.touch()
    assert runner.wait(120) == 0, runner.output()
    tasks = list(job.tasks.all())
    assert [(t.status, t.attempts) for t in tasks] == [(JobTask.Status.SUCCEEDED, 1)] * 2, [t.error for t in tasks]
    runs = Run.objects.filter(pk__in=[task.run_id for task in tasks], status=Run.Status.GRADED)
    graded = wait_until(lambda: runs.count() == 2 and list(runs), 60, "both runs graded", grading_worker)
    assert [run.score for run in graded] == [pytest.approx(1.0)] * 2
    assert "Traceback" not in runner.output()


def test_with_one_slot_the_second_task_waits_and_the_site_refuses_it_a_second_claim(
    live_server, transactional_db, alice, job_world, tmp_path
):
    release = tmp_path / "release"
    job = waiting_job(alice, release)
    token = new_token("remote-one-slot")
    runner = RemoteRunner(live_server.url, token, tmp_path / "host", "--slots", "1", "--tasks", "2")
    (first,) = until(lambda: started(job), runner, "the first task running")
    extra = APIClient()  # a second claim with the runner's token while its one slot is held
    extra.credentials(HTTP_AUTHORIZATION=f"Runner {token}")
    assert extra.post("/api/runner/v1/claim/", {"wait_s": 0}, format="json").status_code == 204
    assert job.tasks.exclude(pk=first.pk).get().status == JobTask.Status.QUEUED
    release.touch()
    assert runner.wait(120) == 0, runner.output()
    first.refresh_from_db()
    second = job.tasks.exclude(pk=first.pk).get()
    assert first.status == second.status == JobTask.Status.SUCCEEDED
    assert second.claimed_at >= first.finished_at  # claimed only once the first had ended


def test_slots_claiming_at_once_never_hold_more_leases_than_the_runner_registered(
    live_server, transactional_db, alice, job_world
):
    job = scripted_job(alice, seeds=6)
    token = new_token("remote-racing")
    slots = [SiteClient(live_server.url, token, lost_site_s=30) for _ in range(6)]
    slots[0].register({"cpu_count": 4, "memory_gb": 16, "images": ["*"], "backend": "local", "slots": 2})
    together, answers = threading.Barrier(len(slots)), []

    def claim(client: SiteClient) -> None:
        together.wait(30)
        answers.append(client.claim(wait_s=0))

    threads = [threading.Thread(target=claim, args=(client,)) for client in slots]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    claimed = [answer["task"] for answer in answers if answer]
    assert len(answers) == 6 and len(claimed) == len(set(claimed)) == 2, answers
    assert set(job.tasks.filter(status=JobTask.Status.RUNNING).values_list("pk", flat=True)) == set(claimed)


def test_a_revoked_token_stops_every_slot_and_their_tasks_go_back_to_the_queue(
    live_server, transactional_db, alice, job_world, tmp_path
):
    job = waiting_job(alice, tmp_path / "never")
    runner = RemoteRunner(live_server.url, new_token("remote-revoked"), tmp_path / "host", "--slots", "2")
    until(lambda: len(started(job)) == 2, runner, "both tasks running at once")
    assert tokens.revoke(Runner.objects.get(name="remote-revoked")) == 2
    assert runner.wait(30) == 3, runner.output()
    assert [t.status for t in job.tasks.all()] == [JobTask.Status.QUEUED] * 2
    assert not list((tmp_path / "host" / "work").glob("task-*"))  # each slot removed its task's folder


def test_sigterm_ends_a_runner_whose_slots_wait_in_their_claims_at_once(live_server, transactional_db, tmp_path):
    runner = RemoteRunner(live_server.url, new_token("remote-idle"), tmp_path / "host", slots="3")
    until(
        lambda: Runner.objects.filter(name="remote-idle", concurrency=3, last_heartbeat__isnull=False).exists(),
        runner,
        "registered with three slots",
    )
    os.killpg(runner.process.pid, signal.SIGTERM)
    assert runner.wait(5) == 0, runner.output()  # the claims' long polls last 20 s
    assert "runner: stopped" in runner.output()


@pytest.mark.parametrize("slots", ["0", "65", "two"])
def test_slots_outside_one_to_sixty_four_stop_the_command_before_it_registers(
    live_server, transactional_db, tmp_path, slots
):
    runner = RemoteRunner(live_server.url, new_token("remote-bad"), tmp_path / "host", "--slots", slots)
    assert runner.wait(60) == 2, runner.output()
    assert "--slots: a whole number from 1 to 64" in runner.output()
    assert Runner.objects.get(name="remote-bad").last_heartbeat is None

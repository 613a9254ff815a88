"""A job task runs on the loopback runner (runner.remote's loop, a client of the live site through the
runner API) with the real local backend: the run exists up front, steps are streamed while the agent
works, each new submission is kept as a snapshot, the outputs are stored, the run graded by the site
as an upload would be; time limit and cancel stop the sandbox."""

from __future__ import annotations

import pytest

from leaderboard.models import Artifact, Run
from runner.backends.local import LocalBackend
from runner.client import SiteClient
from runner.jobs import attempts, task_leases
from runner.models import Job, JobTask
from runner.remote import task as remote_task
from tests.job_support import scripted_job


def run_task(task: JobTask, loopback):
    """Run `task` on the loopback runner, its run graded by the site: the runner's outcome."""
    return loopback.run_graded(task.pk)


def test_a_task_runs_streams_snapshots_and_is_graded(alice, loopback, monkeypatch):
    job = scripted_job(alice, steps=4, sleep=0.5)
    task = job.tasks.get()
    pumped = []
    real_steps = SiteClient.steps
    monkeypatch.setattr(SiteClient, "steps",
                        lambda self, claim, agent, gateway: pumped.append(len(agent)) or real_steps(
                            self, claim, agent, gateway))
    outcome = run_task(task, loopback)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    task.refresh_from_db()
    run = task.run
    assert task.status == JobTask.Status.SUCCEEDED and task.attempts == 1 and task.agent_started_at
    assert run.origin == Run.Origin.JOB and run.owner == alice and run.experiment == job.experiment
    assert run.status == Run.Status.GRADED and run.verification == Run.Verification.VERIFIED
    assert run.score == pytest.approx(1.0) and run.valid_submission and run.gold_medal
    assert sum(1 for n in pumped if n) >= 2, pumped  # steps arrived over several polls, not at the end
    assert run.trajectory.n_steps == 4 and run.n_steps == 4
    names = set(run.artifacts.values_list("kind", "name"))
    assert (Artifact.Kind.SUBMISSION, "submission/submission.csv") in names
    assert (Artifact.Kind.LOG, "logs/trajectory.jsonl") in names and (Artifact.Kind.CODE, "code/solution.py") in names
    assert 1 <= run.snapshots.count() <= 4
    assert "step 3: 40/40" in task.log_tail
    assert "agent seed 0 on spaceship-titanic" in task.log_tail  # only secrets are hidden, not settings


def test_the_time_limit_stops_the_agent_and_grades_what_exists(alice, loopback):
    job = scripted_job(alice, minutes=2.5 / 60, steps=2, sleep=0.2, hang=60, ignore_term=True)
    outcome = run_task(job.tasks.get(), loopback)
    task = JobTask.objects.get(pk=job.tasks.get().pk)
    assert outcome.status == task.status == JobTask.Status.TIMED_OUT
    assert "2.5 s limit" in task.error
    assert task.run.status == Run.Status.GRADED and task.run.score == pytest.approx(1.0)
    assert (task.finished_at - task.agent_started_at).total_seconds() < 2.5 + 1 + 3  # limit + grace + finish


def test_cancelling_stops_the_sandbox_and_keeps_partial_output(alice, loopback, monkeypatch):
    job = scripted_job(alice, steps=2, sleep=0.1, hang=60)
    ticks = []
    real_tick = remote_task.Watch.tick

    def tick(self, final=False):
        real_tick(self, final)
        ticks.append(1)
        if len(ticks) == 8:
            Job.objects.filter(pk=job.pk).update(cancel_requested=True)

    monkeypatch.setattr(remote_task.Watch, "tick", tick)
    outcome = run_task(job.tasks.get(), loopback)
    task = JobTask.objects.get(pk=job.tasks.get().pk)
    assert outcome.status == task.status == JobTask.Status.CANCELLED
    assert task.run.status == Run.Status.FAILED and "cancelled" in task.run.grading_error
    assert task.run.trajectory.n_steps == 2 and task.run.artifacts.filter(kind=Artifact.Kind.SUBMISSION).exists()


def test_an_agent_that_fails_is_recorded_and_still_graded(alice, loopback):
    job = scripted_job(alice, steps=1, sleep=0, exit=3)
    outcome = run_task(job.tasks.get(), loopback)
    task = JobTask.objects.get(pk=job.tasks.get().pk)
    assert outcome.status == task.status == JobTask.Status.FAILED and "exited with code 3" in task.error
    assert task.run.status == Run.Status.GRADED


def test_a_stale_attempt_that_lost_its_lease_writes_nothing(alice, loopback, monkeypatch):
    from runner.client import Fenced

    job = scripted_job(alice, steps=3, sleep=0.3)
    task = job.tasks.get()
    real_tick = remote_task.Watch.tick
    calls = []

    def tick(self, final=False):
        calls.append(1)
        if len(calls) == 3:  # the sweep gave the task to another attempt meanwhile
            JobTask.objects.filter(pk=task.pk).update(lease_owner="someone-else")
        real_tick(self, final)

    monkeypatch.setattr(remote_task.Watch, "tick", tick)
    with pytest.raises(AssertionError, match="abandoned its task") as raised:
        loopback.run_one(LocalBackend(), timeout_s=120)
    assert isinstance(raised.value.__cause__, Fenced)  # the site refused the stale attempt's writes
    task.refresh_from_db()
    assert task.status == JobTask.Status.RUNNING and task.lease_owner == "someone-else"
    # what it had kept while it held the lease stays (snapshots); nothing after: no outputs, no grade
    assert task.run.status == Run.Status.RUNNING
    assert not task.run.artifacts.exclude(kind=Artifact.Kind.SNAPSHOT).exists()


def test_the_finished_run_waits_pending_for_the_sites_grading(alice, loopback):
    """The runner never grades: its finish leaves the run pending with its grading queued on the site
    (whose worker retries a transient error, tests/runs/test_submission.py; the sweep sends it again)."""
    job = scripted_job(alice, steps=1, sleep=0)
    outcome = loopback.run_one(LocalBackend(), timeout_s=120)
    task = JobTask.objects.get(pk=job.tasks.get().pk)
    assert outcome.status == task.status == JobTask.Status.SUCCEEDED
    assert task.run.status == Run.Status.PENDING and task.run.grading_enqueued_at is not None
    assert task.run.score is None and task.run.artifacts.filter(kind=Artifact.Kind.SUBMISSION).exists()


def test_a_running_runs_steps_so_far_show_on_its_page(client, alice, job_world, django_capture_on_commit_callbacks):
    from leaderboard.trajectories.importers.base import StepData
    from leaderboard.trajectories.store import LiveTrajectory

    with django_capture_on_commit_callbacks(execute=False):
        job = scripted_job(alice)
    task = job.tasks.get()
    held = task_leases.claim(task.pk, job_world)
    run = attempts.prepare_run(held, JobTask.objects.select_related("job__experiment", "competition").get(pk=task.pk))
    live = LiveTrajectory(run)
    live.append([StepData(index=0, kind="plan", title="look at the data <b>", text="first")])
    live.append([StepData(index=1, kind="code", title="try lightgbm", data={"file": "a.py", "content": "x = 1\n"},
                          score=0.5)])
    live.close()
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "look at the data &lt;b&gt;" in page and "try lightgbm" in page
    assert client.get(f"/runs/{run.pk}/status.json").json()["status"] == "running"
    assert Run.objects.get(pk=run.pk).n_steps == 2


def test_public_data_missing_on_the_site_fails_the_task_with_the_reason(alice, loopback, tmp_path):
    import shutil

    task = scripted_job(alice).tasks.get()
    shutil.rmtree(tmp_path / "public")
    with pytest.raises(AssertionError):  # the claim is answered with an error: the runner serves nothing
        loopback.run_one(LocalBackend(), timeout_s=10)
    task.refresh_from_db()
    assert task.status == JobTask.Status.FAILED
    assert "the public data of spaceship-titanic is not on the site" in task.error
    assert task.run is None or task.run.status == Run.Status.FAILED

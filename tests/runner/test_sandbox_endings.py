"""How a job's sandbox ended, said on the task and the run (marker docker, runc and runsc): a local
runner's clean-up never touches a Docker sandbox; a sandbox killed from outside the runner fails its
task and its run is not counted; the kernel's OOM kill is said; a refusal for the job's LLM budget
stops the sandbox within JOB_BUDGET_GRACE_S. After each, the runner runs the next job to a graded run."""

from __future__ import annotations

import sys
import time
import uuid

import pytest
from django.core.management import call_command

from leaderboard.models import Run
from runner.backends.local import LocalBackend
from runner.host.outcomes import Outcome
from runner.jobs.services import create_job
from runner.models import AgentDefinition, JobTask, Runner
from runner.remote import task as remote_task
from tests.gateway_support import REAL_OPENAI_KEY, serve_upstream
from tests.runner.test_hostile_agents import (
    assert_no_scratch_left,
    assert_runner_still_healthy,
    hostile_job,
    run_task,
)

upstream = pytest.fixture(scope="module")(serve_upstream)


def on_tick(monkeypatch, after_s: float, action) -> list:
    """Call `action(watch)` once, at the runner's first tick `after_s` into the run; what it returned."""
    done: list = []
    real_tick = remote_task.Watch.tick

    def tick(self, final: bool = False) -> None:
        if not done and not final and self.elapsed() >= after_s:
            done.append(action(self))
        real_tick(self, final)

    monkeypatch.setattr(remote_task.Watch, "tick", tick)
    return done


@pytest.mark.docker
def test_a_local_runners_start_leaves_a_running_docker_sandbox_alone(alice, client, loopback, docker_backend,
                                                                     monkeypatch, capsys):
    job = hostile_job(alice, """
        valid_submission()
        print("working", flush=True)
        time.sleep(5)
        print("finished normally", flush=True)
    """)
    local = f"local-{uuid.uuid4().hex[:8]}"
    # What `make run` or a test does beside it: start a local runner (its start removes stale sandboxes).
    started = on_tick(monkeypatch, 2.0, lambda watch: call_command(
        "runner", backend="local", name=local, register_only=True))
    outcome, run, _ = run_task(job, loopback, docker_backend)
    said = capsys.readouterr().out
    assert started == [None] and Runner.objects.filter(name=local).exists()
    assert f"runner {local} (local)" in said and "removed 0 stale sandboxes" in said
    task = JobTask.objects.get(run=run)
    assert outcome.status == JobTask.Status.SUCCEEDED and outcome.exit_code == 0, (outcome.error, task.log_tail)
    assert "finished normally" in task.log_tail
    assert run.status == Run.Status.GRADED and run.valid_submission
    assert_runner_still_healthy(alice, loopback, docker_backend)


@pytest.mark.docker
def test_a_sandbox_killed_from_outside_fails_and_its_run_is_not_counted(alice, client, loopback, docker_backend,
                                                                        monkeypatch):
    job = hostile_job(alice, """
        valid_submission()
        print("working", flush=True)
        time.sleep(120)
    """, minutes=2)
    killed = on_tick(monkeypatch, 2.0, lambda watch: docker_backend.client.containers.get(watch.spec.name).kill())
    outcome, run, seconds = run_task(job, loopback, docker_backend)
    assert killed == [None] and seconds < 60
    assert outcome.status == JobTask.Status.FAILED and outcome.exit_code == 137
    assert "killed from outside the runner" in outcome.error and not outcome.counted
    task = JobTask.objects.get(run=run)
    assert task.status == JobTask.Status.FAILED and "killed from outside the runner" in task.error
    run.refresh_from_db()
    # Its valid last snapshot is not graded: the run is a failed one, not a finished run on the board.
    assert run.status == Run.Status.FAILED and run.score is None
    assert "killed from outside the runner" in run.grading_error
    client.force_login(alice)
    assert "killed from outside the runner" in client.get(f"/jobs/{job.pk}/").content.decode()
    assert "killed from outside the runner" in client.get(f"/runs/{run.pk}/").content.decode()
    assert_no_scratch_left()
    assert_runner_still_healthy(alice, loopback, docker_backend)


@pytest.mark.docker
def test_an_agent_that_kills_itself_is_not_said_killed_from_outside(alice, loopback, docker_backend):
    """No kill through the engine: the agent's own SIGKILL (which a raw kill of its processes on the host
    looks like too) is said as such and its run stays counted, so that no agent can drop its own bad runs."""
    job = hostile_job(alice, """
        import signal
        valid_submission()
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    outcome, run, _ = run_task(job, loopback, docker_backend)
    assert outcome.status == JobTask.Status.FAILED and outcome.exit_code == 137 and outcome.counted
    assert "killed by SIGKILL (exit code 137), not by this runner" in outcome.error
    assert "outside the runner" not in outcome.error
    assert run.status == Run.Status.GRADED and run.valid_submission


@pytest.mark.docker
def test_the_runners_own_stop_is_not_a_kill_from_outside(alice, loopback, docker_backend, settings):
    job = hostile_job(alice, """
        valid_submission()
        time.sleep(120)
    """, minutes=3 / 60)
    outcome, run, _ = run_task(job, loopback, docker_backend)
    assert outcome.status == JobTask.Status.TIMED_OUT and outcome.counted, outcome.error
    assert "outside" not in outcome.error
    assert run.status == Run.Status.GRADED and run.valid_submission


@pytest.mark.docker
def test_an_agent_past_its_memory_limit_is_said_killed_by_the_kernel(alice, client, loopback, docker_backend):
    job = hostile_job(alice, """
        valid_submission()
        print("allocating", flush=True)
        hog = []
        while True:
            hog.append(bytearray(64 << 20))
    """)
    job.memory_gb = 0.5
    job.save(update_fields=["memory_gb"])
    outcome, run, seconds = run_task(job, loopback, docker_backend)
    task = JobTask.objects.get(run=run)
    assert outcome.status == JobTask.Status.FAILED, (outcome.error, task.log_tail)
    assert "killed by the kernel (out of memory) at its 0.5 GiB memory limit" in outcome.error
    assert "killed by the kernel (out of memory)" in task.error and seconds < 60
    run.refresh_from_db()
    assert run.status == Run.Status.GRADED and run.valid_submission  # its own end: graded
    client.force_login(alice)
    assert "killed by the kernel (out of memory)" in client.get(f"/jobs/{job.pk}/").content.decode()
    assert "killed by the kernel (out of memory)" in client.get(f"/runs/{run.pk}/").content.decode()
    assert_runner_still_healthy(alice, loopback, docker_backend)


@pytest.mark.docker
def test_a_child_killed_by_the_kernel_is_said_though_the_agent_succeeds(alice, loopback, docker_backend):
    job = hostile_job(alice, """
        import subprocess
        child = subprocess.run(["python3", "-c", "hog = []\\nwhile True: hog.append(bytearray(64 << 20))"])
        print("child ended with", child.returncode, flush=True)
        valid_submission()
    """)
    job.memory_gb = 0.5
    job.save(update_fields=["memory_gb"])
    outcome, run, _ = run_task(job, loopback, docker_backend)
    task = JobTask.objects.get(run=run)
    if docker_backend.runtime == "runsc":
        # gVisor's kernel runs in one host process, the one the host's OOM killer kills: the whole
        # sandbox ends with its child, and says why.
        assert outcome.status == JobTask.Status.FAILED, (outcome.error, task.log_tail)
        assert "the agent was killed by the kernel (out of memory)" in task.error
        return
    assert "child ended with -9" in task.log_tail, task.log_tail
    assert outcome.status == JobTask.Status.SUCCEEDED and outcome.exit_code == 0
    assert "a process of the agent was killed by the kernel (out of memory)" in task.error
    assert run.status == Run.Status.GRADED


BUDGET_AGENT = """
import urllib.error, urllib.request
body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "plan"}]}).encode()
for n in range(2):
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                     headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    try:
        print("call", n, urllib.request.urlopen(request, timeout=30).status, flush=True)
    except urllib.error.HTTPError as exc:
        print("call", n, exc.code, flush=True)
valid_submission()
print("refused, working on regardless", flush=True)  # as aideml's interpreter child kept AIDE alive
time.sleep(600)
"""


def run_to_budget_stop(job, runner, backend, monkeypatch) -> tuple[Outcome, Run, float]:
    """The task run; how long after the gateway's refusal the runner began stopping the sandbox."""
    stops: list[tuple[float, float]] = []
    real_stop = remote_task.Watch._stop

    def stop(self, status, why):
        stops.append((time.monotonic(), self.llm.access.gateway.meter.budget_refused()[0]))
        return real_stop(self, status, why)

    monkeypatch.setattr(remote_task.Watch, "_stop", stop)
    outcome, run, _ = run_task(job, runner, backend)
    assert len(stops) == 1
    return outcome, run, stops[0][0] - stops[0][1]


def assert_stopped_for_budget(outcome, run, job, client, after_s: float, grace_s: float) -> None:
    task = JobTask.objects.get(run=run)
    assert "call 0 200" in task.log_tail and "call 1 429" in task.log_tail, task.log_tail
    assert grace_s <= after_s < grace_s + 1.5  # JOB_POLL_S is 0.2 here
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert f"stopped by the runner {grace_s:g} s after its LLM budget ran out" in task.error
    assert "refused calls past the job's budget: this job's limit of 1 LLM calls is reached" in task.error
    run.refresh_from_db()
    assert run.status == Run.Status.GRADED and run.valid_submission
    client.force_login(job.created_by)
    assert "after its LLM budget ran out" in client.get(f"/jobs/{job.pk}/").content.decode()


@pytest.mark.docker
def test_a_budget_refusal_stops_the_sandbox_within_the_grace(alice, client, loopback, docker_backend, upstream,
                                                            settings, monkeypatch):
    settings.LLM_UPSTREAMS = {"openai": upstream.url + "/v1"}
    settings.JOB_BUDGET_GRACE_S = 2
    upstream.reset()
    job = hostile_job(alice, BUDGET_AGENT, minutes=2, env={"OPENAI_API_KEY": REAL_OPENAI_KEY})
    job.settings = {**job.settings, "llm_max_calls": 1}
    job.save(update_fields=["settings"])
    outcome, run, after_s = run_to_budget_stop(job, loopback, docker_backend, monkeypatch)
    assert_stopped_for_budget(outcome, run, job, client, after_s, 2)
    assert len(upstream.requests) == 1
    monkeypatch.undo()
    assert_runner_still_healthy(alice, loopback, docker_backend)


def test_a_budget_refusal_stops_a_local_sandbox_within_the_grace(alice, client, loopback, upstream, settings,
                                                                monkeypatch):
    from tests.runner.test_hostile_agents import PRELUDE

    settings.LLM_UPSTREAMS = {"openai": upstream.url + "/v1"}
    settings.JOB_BUDGET_GRACE_S = 1.5
    upstream.reset()
    AgentDefinition.objects.update_or_create(name="over-budget", defaults={
        "image": "", "command": [sys.executable, "-c", PRELUDE + BUDGET_AGENT]})
    job = create_job(user=alice, agent="over-budget", competitions=["spaceship-titanic"], time_limit_minutes=2,
                     settings={"llm_max_calls": 1}, env={"OPENAI_API_KEY": REAL_OPENAI_KEY})
    outcome, run, after_s = run_to_budget_stop(job, loopback, LocalBackend(), monkeypatch)
    assert_stopped_for_budget(outcome, run, job, client, after_s, 1.5)

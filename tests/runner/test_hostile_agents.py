"""Agents written to misbehave, run in real containers (marker docker) on the loopback runner, under
both OCI runtimes (runc and gVisor's runsc).

Each test registers a hostile agent (`python3 -c CODE` in the site's agent image), runs one job task
with the Docker backend and then searches everything the run stored and every page and API answer
about it for what must never appear there: the private answers, the runner's own environment, host
files, and the job's secret. It also checks that the run ended in the right state with the reason,
that nothing of the task's scratch is left on the runner, and that the runner still runs the next,
ordinary job to a graded run.

The tasks run on the loopback runner (`runs_on`, tests/remote_runner_support.LoopRunner: runner.remote's
own loop, given the live server's URL and a token and nothing else of the site's; the site stores and
grades what it uploads): the outputs it collects and uploads, the steps and the log tail it streams, the
limits and the quota it applies from the claim, the secrets it redacts, its scratch, its cancellation
through the lease, its clean-up of stale sandboxes and its LLM gateway (test_hostile_trajectory).
"""

from __future__ import annotations

import base64
import json
import os
import textwrap
import threading
import time
from pathlib import Path

import pytest
from django.conf import settings

from leaderboard.models import Run
from runner.backends import TOOLS_DIR
from runner.backends.docker import DockerBackend
from runner.host import scratch
from runner.host.live import LineTail
from runner.host.outcomes import Outcome
from runner.host.outputs import TRAJECTORY_FILE
from runner.jobs.services import cancel_job, create_job
from runner.models import AgentDefinition, JobTask
from tests.job_support import COMPETITION, needs_agent_tools, scripted_job
from tests.remote_runner_support import LoopRunner

pytestmark = [pytest.mark.docker, needs_agent_tools]
SECRET = "tok-live-7Hq2ZpXw9LmN4rT8vKd3"

# The start of every hostile agent: the folders, and a valid submission written the ordinary way.
PRELUDE = """
import base64, json, os, sys, time
from pathlib import Path
data, sub, logs, code = (Path(os.environ[k]) for k in ("DATA_DIR", "SUBMISSION_DIR", "LOGS_DIR", "CODE_DIR"))
def valid_submission():
    (sub / "submission.csv").write_text((data / "sample_submission.csv").read_text())
"""


@pytest.fixture
def answers(job_world, tmp_path) -> Path:
    return tmp_path / "answers.csv"  # registered by job_world; the host path an attacker would guess


def hostile_job(user, code: str, *, minutes: float = 1.0, env: dict | None = None):
    AgentDefinition.objects.update_or_create(name="hostile", defaults={
        "image": "", "command": ["python3", "-c", PRELUDE + textwrap.dedent(code)]})
    return create_job(user=user, agent="hostile", competitions=[COMPETITION], time_limit_minutes=minutes, env=env)


@pytest.fixture
def runs_on(loopback):
    """Where `run_task` runs a task: the loopback runner (runner.remote's loop against the live server)."""
    return loopback


def run_task(job, runner: LoopRunner, backend) -> tuple[Outcome, Run, float]:
    """Run the job's one task on the loopback `runner` with `backend`: the runner's outcome, the run as the
    site stored and graded it, and the seconds it took."""
    task = job.tasks.get()
    started = time.monotonic()
    outcome = runner.run_graded(task.pk, backend, timeout_s=job.time_limit_s + 120)
    return outcome, Run.objects.get(pk=JobTask.objects.get(pk=task.pk).run_id), time.monotonic() - started


def cancel_once_running(job, user, after_s: float) -> threading.Thread:
    """The owner cancels the job `after_s` into its agent's run, from another thread (the site's
    database, as a remote runner's site sees it)."""
    from django.db import connection

    def cancel() -> None:
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not JobTask.objects.filter(
                    job=job, agent_started_at__isnull=False).exists():
                time.sleep(0.1)
            time.sleep(after_s)
            cancel_job(job=job, user=user)
        finally:
            connection.close()

    thread = threading.Thread(target=cancel, daemon=True)
    thread.start()
    return thread


def everything_about(run: Run, job, client) -> bytes:
    """Every stored byte of the run and every page and API answer about it, as its owner sees them."""
    run.refresh_from_db()
    task = JobTask.objects.get(run=run)
    parts = [json.dumps([run.grading_report, run.grading_error, run.import_warnings]).encode(),
             task.log_tail.encode(), task.error.encode()]
    for artifact in run.artifacts.all():
        parts += [artifact.name.encode(), artifact.file.open("rb").read()]
        artifact.file.close()
    urls = [f"/runs/{run.pk}/", f"/runs/{run.pk}/trajectory.jsonl", f"/runs/{run.pk}/live.json",
            f"/runs/{run.pk}/grading-report.json", f"/api/runs/{run.pk}/", f"/api/runs/{run.pk}/steps/",
            f"/jobs/{job.pk}/", f"/api/jobs/{job.pk}/", "/runs/", "/"]
    urls += [f"/runs/{run.pk}/files/{a.pk}/" for a in run.artifacts.all()]
    for url in urls:
        response = client.get(url)
        assert response.status_code < 500, url
        parts.append(b"".join(response.streaming_content) if response.streaming else response.content)
    return b"\n".join(parts)


def assert_no_scratch_left() -> None:
    left = sorted(p.name for p in Path(settings.RUNNER_WORK_DIR).glob("task-*")) if Path(
        settings.RUNNER_WORK_DIR).is_dir() else []
    assert left == [], f"scratch left on the runner: {left}"


def assert_runner_still_healthy(user, runner, backend) -> None:
    outcome, run, _ = run_task(scripted_job(user, steps=2, sleep=0.1), runner, backend)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert run.status == Run.Status.GRADED and run.score == pytest.approx(1.0)
    assert_no_scratch_left()


def host_secrets(answers: Path) -> dict[str, bytes]:
    found = {"answers": answers.read_bytes(), "runner environment": Path("/proc/self/environ").read_bytes()}
    shadow = Path("/etc/shadow")
    if os.access(shadow, os.R_OK):
        found["/etc/shadow"] = shadow.read_bytes().split(b"\n")[0]
    return found


def test_links_to_the_answers_and_host_files_are_never_followed(alice, client, runs_on, docker_backend, answers,
                                                                tmp_path):
    canary = tmp_path / "runner-file.txt"
    canary.write_text("the runner's own file\n")
    job = hostile_job(alice, f"""
        for name, target in (("e.txt", "/proc/self/environ"), ("shadow", "/etc/shadow"), ("root", "/"),
                             ("answers.csv", {str(answers)!r})):
            os.symlink(target, code / name)
        os.symlink({str(answers)!r}, sub / "submission.csv")
        os.symlink("/etc/shadow", logs / "trajectory.jsonl")
        os.symlink({str(canary)!r}, logs / "agent-output.log")  # a write through it would clobber a host file
        (code / "deep").mkdir()
        os.symlink("/proc/self", code / "deep" / "proc")
        os.symlink("/dev/zero", code / "zeros.bin")
        print("planted")
    """)
    outcome, run, _ = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    recipe = Run.objects.get(pk=run.pk).recipe  # how it ran, recorded for a reproduction
    assert recipe["sandbox"]["runtime"] == docker_backend.runtime and recipe["agent"]["image_id"].startswith("sha256:")
    assert run.status == Run.Status.GRADED and run.score is None and not run.valid_submission
    assert run.state == "invalid submission" and "submission.csv is a symbolic link" in run.grading_error
    names = set(run.artifacts.values_list("name", flat=True))
    assert names == {"logs/agent-output.log"}, names  # only the runner's own record of the output
    warnings = "\n".join(run.import_warnings)
    for planted in ("code/e.txt", "code/shadow", "code/root", "code/answers.csv", "code/deep/proc",
                    "code/zeros.bin", "logs/trajectory.jsonl", "logs/agent-output.log"):
        assert planted in warnings, (planted, warnings)
    assert canary.read_text() == "the runner's own file\n"
    stored = everything_about(run, job, client)
    for what, value in host_secrets(answers).items():
        assert value not in stored, f"{what} leaked"
    assert_no_scratch_left()
    assert_runner_still_healthy(alice, runs_on, docker_backend)


def test_a_fifo_or_folder_as_submission_never_blocks_and_the_time_limit_wins(alice, client, runs_on, docker_backend):
    job = hostile_job(alice, """
        os.mkfifo(sub / "submission.csv")
        os.mkfifo(logs / "trajectory.jsonl")
        os.mkfifo(code / "pipe")
        print("waiting forever", flush=True)
        time.sleep(600)
    """, minutes=0.25)
    outcome, run, seconds = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.TIMED_OUT, (outcome, JobTask.objects.get(run=run).log_tail)
    assert "15 s limit" in outcome.error
    assert seconds < 15 + 20, f"took {seconds:.0f} s for a 15 s limit"
    if docker_backend.runtime == "runc":
        assert run.state == "invalid submission" and "submission.csv is a FIFO" in run.grading_error
        assert "code/pipe: skipped, a FIFO" in "\n".join(run.import_warnings)
    else:  # gVisor keeps a FIFO made on a bind mount inside its own kernel: the host sees no file at all
        assert run.state == "no submission"
    assert b"waiting forever" in everything_about(run, job, client)
    assert_no_scratch_left()

    job = hostile_job(alice, """
        (sub / "submission.csv").mkdir()
        (sub / "submission.csv" / "x").write_text("not a file")
    """)
    outcome, run, _ = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.SUCCEEDED
    assert run.state == "invalid submission" and "submission.csv is a folder" in run.grading_error
    assert_runner_still_healthy(alice, runs_on, docker_backend)


def test_cancel_stops_an_agent_that_left_fifos(alice, runs_on, docker_backend):
    job = hostile_job(alice, """
        os.mkfifo(sub / "submission.csv")
        os.mkfifo(logs / "trajectory.jsonl")
        time.sleep(600)
    """, minutes=10)
    cancel_once_running(job, alice, 2)  # the site tells the runner as it renews the lease
    outcome, run, seconds = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.CANCELLED and seconds < 30
    assert run.status == Run.Status.FAILED and run.grading_error == "cancelled by its job"
    assert_no_scratch_left()


def test_a_secret_is_never_stored_in_any_form(alice, client, runs_on, docker_backend):
    job = hostile_job(alice, """
        secret = os.environ["MY_TOKEN"]
        print("key is", secret, flush=True)
        print("b64", base64.b64encode(secret.encode()).decode(), "hex", secret.encode().hex(), file=sys.stderr)
        (code / "leak.py").write_text(f"API_KEY = {secret!r}\\n" + "x = 1\\n" * 1000 + secret)
        (code / f"{secret}.txt").write_text("named after it")
        (logs / "trajectory.jsonl").write_text(
            json.dumps({"kind": "code", "title": secret, "data": {"content": "key=" + secret}}) + "\\n"
            + json.dumps({"kind": "observation", "text": base64.b64encode(("k:" + secret).encode()).decode()}) + "\\n")
        valid_submission()
        (sub / "notes.txt").write_text(secret)
    """, env={"MY_TOKEN": SECRET})
    outcome, run, _ = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert run.status == Run.Status.GRADED and run.valid_submission and run.trajectory.n_steps == 2
    stored = everything_about(run, job, client)
    assert b"[secret]" in stored  # it was there to be found, and replaced
    forms = [SECRET.encode(), SECRET.encode().hex().encode(), base64.b64encode(SECRET.encode()).rstrip(b"="),
             base64.b64encode(b"k:" + SECRET.encode())[4:20]]
    for form in forms:
        assert form not in stored, form
    assert "code/[secret].txt" in set(run.artifacts.values_list("name", flat=True))
    assert_no_scratch_left()


def test_an_agent_that_writes_too_much_keeps_its_graded_run(alice, client, runs_on, docker_backend, settings):
    settings.JOB_OUTPUT_FILE_BYTES = 1 << 20
    settings.JOB_OUTPUT_TOTAL_BYTES = 4 << 20
    job = hostile_job(alice, """
        valid_submission()
        with open(code / "model.bin", "wb") as f:
            f.write(b"w" * (3 << 20))
        with open(logs / "trajectory.jsonl", "w") as f:
            for n in range(3000):
                f.write(json.dumps({"kind": "observation", "text": f"step {n} " + "y" * 1000}) + "\\n")
        with open(logs / "open-line.txt", "wb") as f:
            f.write(b"z" * (2 << 20))
        for n in range(200):
            (code / f"small-{n:03d}.txt").write_text("s" * 10_000)
        chunk = "o" * 1023 + "\\n"
        for _ in range(12 * 1024):
            sys.stdout.write(chunk)
        sys.stdout.flush()
    """)
    outcome, run, _ = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None
    sizes = dict(run.artifacts.exclude(kind="snapshot").values_list("name", "size"))
    assert sizes["submission/submission.csv"] > 0
    assert all(size <= 1 << 20 for size in sizes.values()), sizes
    assert sum(sizes.values()) <= 4 << 20
    warnings = "\n".join(run.import_warnings)
    for cut in ("code/model.bin: 3,145,728 bytes", "logs/open-line.txt: 2,097,152 bytes", "logs/trajectory.jsonl",
                "logs/agent-output.log"):
        assert f"{cut}" in warnings and "stored cut" in warnings, (cut, warnings)
    assert "code/small-000.txt: not stored, the run's outputs reached 4,194,304 bytes" in warnings
    assert run.trajectory.n_steps > 0  # the steps streamed live are kept when the stored file was cut
    assert_no_scratch_left()


@pytest.mark.skipif(os.getuid() != 0, reason="the file system quota needs root (else the quota is measured)")
def test_the_disk_quota_holds_inside_the_sandbox(alice, runs_on, docker_backend, settings):
    settings.JOB_DISK_QUOTA_MOUNT = True
    settings.JOB_DISK_QUOTA_BYTES = 32 << 20
    job = hostile_job(alice, """
        valid_submission()
        written = 0
        try:
            with open(code / "fill.bin", "wb") as f:
                while written < (256 << 20):
                    f.write(b"f" * (1 << 20))
                    f.flush()
                    written += 1 << 20
        except OSError as exc:
            print("stopped by", exc.strerror, "after", written >> 20, "MiB", flush=True)
    """)
    outcome, run, _ = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    tail = JobTask.objects.get(run=run).log_tail
    assert "stopped by No space left on device" in tail, tail
    assert run.status == Run.Status.GRADED and run.valid_submission
    assert_no_scratch_left()
    assert not any(str(settings.RUNNER_WORK_DIR) in line for line in Path("/proc/mounts").read_text().splitlines())


def test_the_measured_quota_stops_an_agent_that_fills_its_folders(alice, runs_on, docker_backend, settings,
                                                                 monkeypatch):
    settings.JOB_DISK_QUOTA_MOUNT = False
    settings.JOB_DISK_QUOTA_BYTES = 16 << 20
    monkeypatch.setattr(scratch, "QUOTA_CHECK_S", 0.5)
    job = hostile_job(alice, """
        valid_submission()
        with open(code / "fill.bin", "wb") as f:
            for _ in range(64):
                f.write(b"f" * (1 << 20))
                f.flush()
        time.sleep(600)
    """)
    outcome, run, seconds = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.FAILED and "16,777,216-byte disk quota" in outcome.error
    assert seconds < 30
    assert_no_scratch_left()


def test_an_agent_that_dies_past_its_quota_before_the_check_fails_on_the_quota(alice, runs_on, docker_backend,
                                                                               settings, monkeypatch):
    """Killed by something else (its memory limit counts the page cache of what it wrote) or exiting
    on its own between two checks: the quota it passed is what the run says, not an exit code."""
    settings.JOB_DISK_QUOTA_MOUNT = False
    settings.JOB_DISK_QUOTA_BYTES = 16 << 20
    monkeypatch.setattr(scratch, "QUOTA_CHECK_S", 3600)
    job = hostile_job(alice, """
        valid_submission()
        (code / "fill.bin").write_bytes(b"f" * (24 << 20))
        raise SystemExit(3)
    """)
    outcome, run, _ = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.FAILED and "16,777,216-byte disk quota" in outcome.error
    assert_no_scratch_left()


def test_an_endless_unterminated_trajectory_line_is_not_reread(alice, runs_on, docker_backend, monkeypatch):
    reads: list[int] = []
    real_read = LineTail.new_lines  # what streams the agent's trajectory, in-process and remote

    def counting(self):
        before = self.offset
        result = real_read(self)
        if self.name == TRAJECTORY_FILE:
            reads.append(self.offset - before)
        return result

    monkeypatch.setattr(LineTail, "new_lines", counting)
    job = hostile_job(alice, """
        valid_submission()
        with open(logs / "trajectory.jsonl", "wb") as f:
            for _ in range(40):
                f.write(b"q" * (1 << 20))
                f.flush()
                time.sleep(0.05)
            f.write(b"\\n" + json.dumps({"kind": "observation", "text": "after"}).encode() + b"\\n")
        time.sleep(1)
    """)
    outcome, run, _ = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert sum(reads) <= (40 << 20) + 4096  # every byte read once, never again
    assert "line 1: longer than" in "\n".join(run.import_warnings)
    assert run.status == Run.Status.GRADED


def test_another_runners_sandboxes_survive_this_runners_clean_up(alice, runs_on, docker_backend, tmp_path):
    from runner.backends import SandboxSpec

    other = DockerBackend(runner_name="a-different-runner")
    folder = tmp_path / "other"
    (folder / "data").mkdir(parents=True)
    spec = SandboxSpec(name=f"medalboard-task-999999-a{os.getpid()}", command=["sleep", "120"],
                       data_dir=folder / "data", workdir=folder / "work", tools_dir=TOOLS_DIR,
                       image=settings.MEDALBOARD_AGENT_IMAGE)
    theirs = other.start(spec)
    try:
        assert docker_backend.remove_stale() == 0
        assert theirs.poll() is None  # still running
        assert_runner_still_healthy(alice, runs_on, docker_backend)
        assert theirs.poll() is None
    finally:
        theirs.remove()

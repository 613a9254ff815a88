"""An agent that writes too much, or leaves something other than a file as its submission, with the
local backend (no engine needed; the Docker suite in test_hostile_agents.py runs the same attacks in
containers): the run keeps its submission and what fits, says what was cut and why, and is graded;
a submission that is a folder, a FIFO, a link (to a host file or out of the run folder), a device or a
socket is an invalid submission with the reason, never followed and never blocking. The measured
disk quota stops an agent that fills its folders, and the outputs written up to then are kept."""

from __future__ import annotations

import os
import sys
import textwrap
import time

import pytest

from leaderboard.models import Run
from runner.host import scratch
from runner.host.outcomes import Outcome
from runner.jobs.services import create_job
from runner.models import AgentDefinition, JobTask
from tests.job_support import COMPETITION

PRELUDE = """
import json, os, socket, stat, sys, time
from pathlib import Path
data, sub, logs, code = (Path(os.environ[k]) for k in ("DATA_DIR", "SUBMISSION_DIR", "LOGS_DIR", "CODE_DIR"))
def valid_submission():
    (sub / "submission.csv").write_text((data / "sample_submission.csv").read_text())
"""


def run_agent(user, loopback, code: str, minutes: float = 1.0) -> tuple[Outcome, Run, float]:
    """The agent's one task on the loopback runner: its outcome, the run as the site stored and graded it,
    and the seconds from the claim to the site's grade."""
    AgentDefinition.objects.update_or_create(name="misbehaving", defaults={
        "image": "", "command": [sys.executable, "-c", PRELUDE + textwrap.dedent(code)]})
    job = create_job(user=user, agent="misbehaving", competitions=[COMPETITION], time_limit_minutes=minutes)
    task = job.tasks.get()
    started = time.monotonic()
    outcome = loopback.run_graded(task.pk)
    return outcome, Run.objects.get(pk=JobTask.objects.get(pk=task.pk).run_id), time.monotonic() - started


def test_too_big_a_file_a_stdout_flood_and_too_big_a_trajectory_keep_the_graded_run(alice, loopback, settings):
    settings.JOB_OUTPUT_FILE_BYTES = 1 << 20
    settings.JOB_OUTPUT_TOTAL_BYTES = 6 << 20
    outcome, run, _ = run_agent(alice, loopback, """
        valid_submission()
        (code / "model.bin").write_bytes(b"w" * (3 << 20))
        with open(logs / "trajectory.jsonl", "w") as f:
            for n in range(3000):
                f.write(json.dumps({"kind": "observation", "text": f"step {n} " + "y" * 1000}) + "\\n")
        chunk = "o" * 1023 + "\\n"
        for _ in range(3 * 1024):
            sys.stdout.write(chunk)
        sys.stdout.write("the last line of the output\\n")
        sys.stdout.flush()
    """)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None
    sizes = dict(run.artifacts.exclude(kind="snapshot").values_list("name", "size"))
    assert sizes["submission/submission.csv"] > 0
    assert max(sizes.values()) <= 1 << 20 and sum(sizes.values()) <= 6 << 20, sizes
    warnings = "\n".join(run.import_warnings)
    for cut in ("code/model.bin: 3,145,728 bytes", "logs/trajectory.jsonl", "logs/agent-output.log"):
        assert any(cut in line and "stored cut" in line for line in run.import_warnings), (cut, warnings)
    output = run.artifacts.get(name="logs/agent-output.log")
    assert output.file.open("rb").read().rstrip().endswith(b"the last line of the output")  # the end is kept
    assert run.trajectory.n_steps >= 1000  # the steps streamed while it ran are kept though the file was cut


@pytest.mark.parametrize("plant, reason", [
    ("(sub / 'submission.csv').mkdir(); (sub / 'submission.csv' / 'x').write_text('x')", "is a folder"),
    ("os.mkfifo(sub / 'submission.csv')", "is a FIFO"),
    ("os.symlink(data / 'sample_submission.csv', sub / 'submission.csv')", "is a symbolic link"),
    ("os.symlink('/etc/passwd', sub / 'submission.csv')", "is a symbolic link"),
    ("os.symlink('../../..', sub / 'up'); os.symlink('up/x.csv', sub / 'submission.csv')", "is a symbolic link"),
    # Bound by a relative name: a socket's path has a 107-byte limit that pytest's tmp folders can pass.
    ("os.chdir(sub); socket.socket(socket.AF_UNIX).bind('submission.csv')", "is a socket"),
    ("os.mknod(sub / 'submission.csv', 0o600 | stat.S_IFCHR, os.makedev(1, 5))", "is a character device"),
])
def test_a_submission_that_is_not_a_file_is_invalid_with_the_reason(alice, loopback, plant, reason):
    if "mknod" in plant and os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    outcome, run, seconds = run_agent(alice, loopback, plant + "\nprint('planted', flush=True)\n")
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert seconds < 30  # nothing blocked on it
    assert run.status == Run.Status.GRADED and run.score is None and not run.valid_submission
    assert run.state == "invalid submission" and f"submission.csv {reason}" in run.grading_error, run.grading_error
    assert not run.artifacts.filter(name="submission/submission.csv").exists()


def test_the_measured_quota_stops_an_agent_filling_its_folders_and_its_run_is_graded(alice, loopback, settings,
                                                                                       monkeypatch):
    settings.JOB_DISK_QUOTA_BYTES = 8 << 20
    monkeypatch.setattr(scratch, "QUOTA_CHECK_S", 0.3)
    outcome, run, seconds = run_agent(alice, loopback, """
        valid_submission()
        for n in range(64):  # many files across the folders: the quota is on all of them together
            (code if n % 2 else logs / "deep").mkdir(exist_ok=True)
            ((code if n % 2 else logs / "deep") / f"fill-{n}.bin").write_bytes(b"f" * (1 << 20))
            time.sleep(0.02)
        time.sleep(600)
    """)
    assert outcome.status == JobTask.Status.FAILED and "8,388,608-byte disk quota" in outcome.error, outcome.error
    assert seconds < 30
    assert run.artifacts.filter(name="submission/submission.csv").exists()
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None


def test_llm_usage_totals_past_the_run_columns_are_unknown_not_a_database_error():
    """The gateway sums the counts an upstream reports: past 64 bits, or a cost that overflowed to
    infinity, they would fail the run's save (and lose its outputs) on PostgreSQL."""
    from runner.gateway.limits import Totals
    from runner.host import llm_access
    from runner.jobs import llm_usage

    class Meter:
        def budget_refused(self):
            return None

        def models(self):
            return {"gpt-4o": 3}

    class Gateway:
        meter = Meter()

        def stop(self) -> None: ...

        def status(self) -> str:
            return ""

        def totals(self) -> Totals:
            return Totals(calls=3, tokens_in=3 * (2**63 - 1), tokens_out=12, cost_usd=float("inf"))

    usage, _ = llm_usage.usage_and_note(llm_access.finish(llm_access.LlmAccess({}, gateway=Gateway())))
    assert usage == {"tokens_in": None, "tokens_out": 12, "usage_metered": True, "cost_usd": None}


# A sparse 48 MiB submission.csv (a valid start, a changed end) rewritten every 0.4 s, between two
# valid small ones: the snapshots must stay within their half of the run's output limits.
SPARSE_SUBMISSIONS = """
    valid_submission()
    time.sleep(0.6)
    text = (data / "sample_submission.csv").read_text()
    end = time.time() + SECONDS
    n = 0
    while time.time() < end:
        with open(sub / "submission.csv", "w") as f:
            f.write(text)
            f.seek((48 << 20) - 16)
            f.write(f"{n:015d}\\n")  # a new content each time, 48 MiB long but for the holes
        n += 1
        time.sleep(0.4)
    print("changed", n, "times", flush=True)
    (sub / "submission.csv").write_text(text.replace("False", "True", 1))  # the last, valid again
    time.sleep(0.8)
"""


def sparse_limits(settings) -> None:
    """The run's output limits for SPARSE_SUBMISSIONS: 64 MiB a file, 160 MiB in all, so the snapshots'
    half (80 MiB) holds one 48 MiB change and refuses the next, whatever the machine's speed lets the
    watch see of the changes (all it needs is one more after the first it kept)."""
    settings.JOB_OUTPUT_FILE_BYTES = 64 << 20
    settings.JOB_OUTPUT_TOTAL_BYTES = 160 << 20


def check_bounded_snapshots(run: Run) -> None:
    """At most half the run's 160 MiB in snapshots, none of them torn by a rewrite, one note for the
    changes past it, the last snapshot (the valid one) kept and graded, and the final submission graded."""
    from leaderboard.runs.snapshots import grade_pending_now

    grade_pending_now(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None, run.grading_error
    snapshots = list(run.snapshots.select_related("artifact").order_by("elapsed_seconds"))
    sizes = [s.artifact.size for s in snapshots]
    print(f"{len(sizes)} snapshots kept, {sum(sizes):,} bytes: {sizes}")
    assert 48 << 20 < sum(sizes) <= 80 << 20, sizes  # one 48 MiB change kept: the next would pass the share
    assert all(size == 48 << 20 or size < 1 << 20 for size in sizes), sizes  # none torn by a rewrite mid-read
    assert snapshots[0].score is not None and snapshots[-1].score is not None, [s.grading_error for s in snapshots]
    assert snapshots[-1].artifact.size < 1 << 20  # the last kept is the last valid one
    total = sum(run.artifacts.values_list("size", flat=True))
    assert total <= 160 << 20, total
    notes = [n for n in run.import_warnings if "not kept as snapshots" in n]
    assert len(notes) == 1 and "past the 83,886,080-byte total" in notes[0], run.import_warnings
    skipped = int(notes[0].split("submission.csv: ")[1].split(" change")[0])
    assert skipped >= 1, notes


def test_a_sparse_submission_changed_quickly_keeps_snapshots_within_the_run_limits(alice, loopback, settings):
    sparse_limits(settings)
    outcome, run, _ = run_agent(alice, loopback, "SECONDS = 10\n" + textwrap.dedent(SPARSE_SUBMISSIONS))
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    check_bounded_snapshots(run)

"""What the runner stores from a sandbox's folders when the agent plants what a container cannot
stop: hard links (another name of a file outside the folder), a file swapped for a link after the
runner looked at it, and secrets in the names of files the runner skips or cuts. The agent runs
with the local backend (it shares the runner's file system, so a hard link to the answers can be
made at all); the Docker tests (test_hostile_agents) run the rest in real containers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from runner.backends.local import LocalBackend
from runner.host import outputs, sandbox_files
from runner.models import JobTask
from tests.job_support import needs_agent_tools
from tests.runner import test_hostile_agents
from tests.runner.test_hostile_agents import SECRET, everything_about, hostile_job, run_task

pytestmark = needs_agent_tools
runs_on = test_hostile_agents.runs_on  # the fixture: each test runs on the loopback runner


@pytest.fixture
def answers(job_world, tmp_path):
    return tmp_path / "answers.csv"  # registered by job_world, on the runner's file system


def test_hard_links_to_the_answers_are_never_read(alice, client, runs_on, answers):
    job = hostile_job(alice, f"""
        os.link({str(answers)!r}, code / "answers.csv")
        (code / "nested" / "deeper").mkdir(parents=True)
        os.link({str(answers)!r}, code / "nested" / "deeper" / "a.csv")
        os.link({str(answers)!r}, sub / "submission.csv")
        os.link({str(answers)!r}, logs / "trajectory.jsonl")
    """)
    outcome, run, _ = run_task(job, runs_on, LocalBackend())
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert run.state == "invalid submission" and "submission.csv is a hard link" in run.grading_error
    assert run.score is None and not run.valid_submission
    assert set(run.artifacts.values_list("name", flat=True)) == {"logs/agent-output.log"}
    warnings = "\n".join(run.import_warnings)
    for planted in ("code/answers.csv", "code/nested/deeper/a.csv", "logs/trajectory.jsonl"):
        assert f"{planted}: skipped, a hard link" in warnings, (planted, warnings)
    stored = everything_about(run, job, client)
    assert answers.read_bytes() not in stored


def test_a_submission_swapped_for_a_link_after_the_check_is_invalid_and_unread(alice, client, runs_on, answers,
                                                                               monkeypatch):
    real = outputs._submission_problem

    def then_swap(spec, limits):
        problem = real(spec, limits)  # it was a regular file when looked at ...
        target = spec.host_submission_dir / outputs.SUBMISSION_FILE
        target.unlink()
        os.symlink(answers, target)  # ... and a link to the answers when read
        (spec.host_code_dir / "solution.py").unlink()
        os.symlink(answers, spec.host_code_dir / "solution.py")
        return problem

    monkeypatch.setattr(outputs, "_submission_problem", then_swap)
    job = hostile_job(alice, """
        valid_submission()
        (code / "solution.py").write_text("print(1)")
    """)
    outcome, run, _ = run_task(job, runs_on, LocalBackend())
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert run.state == "invalid submission" and "submission.csv is a symbolic link" in run.grading_error
    assert "code/solution.py is a symbolic link: skipped" in "\n".join(run.import_warnings)
    assert answers.read_bytes() not in everything_about(run, job, client)


def test_secrets_in_the_names_of_skipped_and_cut_files_are_not_stored(alice, client, runs_on, settings):
    settings.JOB_OUTPUT_FILE_BYTES = 64 << 10
    job = hostile_job(alice, """
        secret = os.environ["MY_TOKEN"]
        valid_submission()
        os.symlink("/etc/hostname", code / f"link-{secret}")
        os.mkfifo(code / f"{secret}.fifo")
        (code / secret).mkdir()
        os.symlink("/", code / secret / "root")
        (code / f"big-{secret}.bin").write_bytes(b"b" * (128 << 10))
        (code / secret / f"{secret}.py").write_text("stored, under another name")
        (code / "one").write_text("x")
        os.link(code / "one", code / f"two-{secret}")
    """, env={"MY_TOKEN": SECRET})
    outcome, run, _ = run_task(job, runs_on, LocalBackend())
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert run.valid_submission
    warnings = "\n".join(run.import_warnings)
    for note in ("code/link-[secret]: skipped, a symbolic link", "code/[secret].fifo: skipped, a FIFO",
                 "code/[secret]/root: skipped, a symbolic link", "code/big-[secret].bin: 131,072 bytes, stored cut",
                 "code/two-[secret]: skipped, a hard link (2 names)"):
        assert note in warnings, (note, warnings)
    assert SECRET.encode() not in everything_about(run, job, client)
    stored = {a.name: a.file.name for a in run.artifacts.all()}
    assert "code/[secret]/[secret].py" in stored and not any(SECRET in path for path in stored.values())


def test_a_secret_cut_in_two_by_a_limit_leaves_no_piece_in_the_cut_log_tail_or_file(alice, client, runs_on,
                                                                                   settings):
    from runner.remote.task import LOG_TAIL_BYTES

    settings.JOB_OUTPUT_FILE_BYTES = limit = 64 << 10
    rest = len(SECRET) - len(SECRET) // 2  # what lies after each cut
    job = hostile_job(alice, f"""
        secret = os.environ["MY_TOKEN"]
        valid_submission()
        (code / "model.txt").write_text("c" * ({limit} - {len(SECRET) // 2}) + secret + "c" * 100)  # cut after half
        after = {LOG_TAIL_BYTES} - {rest}  # the log tail starts inside the second one
        sys.stdout.write("A" * 100 + secret + "B" * ({limit} - {rest} - len(secret) - after) + secret + "C" * after)
        sys.stdout.flush()
    """, env={"MY_TOKEN": SECRET})
    outcome, run, _ = run_task(job, runs_on, LocalBackend())
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    warnings = "\n".join(run.import_warnings)
    for cut in ("code/model.txt", "logs/agent-output.log"):
        assert any(w.startswith(f"{cut}: ") and "stored cut" in w for w in run.import_warnings), warnings
    stored = everything_about(run, job, client)
    pieces = {SECRET[i:i + 8].encode() for i in range(len(SECRET) - 7)}  # shorter ones are in words ("live")
    assert b"[secret]" in stored
    assert not {piece for piece in pieces if piece in stored}, "a piece of the secret is stored"


def test_the_measured_quota_counts_every_name_of_a_hard_linked_file(tmp_path):
    from runner.host.scratch import Scratch

    scratch = Scratch(tmp_path / "task-1-a1", quota_bytes=3 << 20, mount=False)
    scratch.create()
    (scratch.path / "big.bin").write_bytes(b"f" * (2 << 20))
    os.link(scratch.path / "big.bin", scratch.path / "again.bin")
    assert sandbox_files.walk(scratch.path).files == []  # never read: either name may be another's file
    assert scratch.used_bytes() == 4 << 20 and scratch.over_quota()



def as_nobody(work) -> int:
    """`work()` in a child process that is not root (root reads any folder, whatever its mode): as the
    runner that is not root, which runs the sandbox under its own uid; the child's exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(65534)
            os.setuid(65534)
            os._exit(0 if work() else 1)
        except BaseException:  # noqa: BLE001 - a child never returns into pytest
            os._exit(2)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.mark.skipif(os.getuid() != 0, reason="becomes another user to be a runner that is not root")
def test_folders_the_agent_closes_are_measured_and_deleted_all_the_same(tmp_path):
    import tempfile

    from runner.host.scratch import Scratch, clean_stale

    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="closed-"))
    os.chown(base, 65534, 65534)

    def agent_closes_its_folders() -> bool:
        scratch = Scratch(base / "task-1-a1", quota_bytes=1 << 20, mount=False)
        scratch.create()
        hidden = scratch.path / "code" / "a" / "hidden"
        hidden.mkdir(parents=True)
        (hidden / "fill.bin").write_bytes(b"f" * (2 << 20))
        os.chmod(hidden, 0)  # neither listable nor searchable: its bytes would not count
        os.chmod(scratch.path / "code" / "a", 0o500)  # nothing in it could be deleted
        (base / "task-2-a1" / "logs").mkdir(parents=True)
        os.chmod(base / "task-2-a1" / "logs", 0)  # a killed runner's leftover, closed as well
        measured = scratch.used_bytes() >= 2 << 20 and scratch.over_quota()
        scratch.delete()
        return measured and not scratch.path.exists() and clean_stale(base, keep=set()) == 1 and not any(base.iterdir())

    try:
        assert as_nobody(agent_closes_its_folders) == 0
    finally:
        shutil.rmtree(base, ignore_errors=True)

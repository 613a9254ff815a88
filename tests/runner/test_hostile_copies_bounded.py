"""Agents whose files the runner copies while and after they run, set to make it write without bound:
a sparse 48 MiB submission.csv rewritten every 0.4 s (each change a snapshot), and a research agent
that truncates a file of its workspace to 1.5 GiB (its snapshots and the copy its eval scores). The
runner's copies stay within the run's output limits, with a note for what was left out; the run ends
graded; the runner runs the next job. In real containers under runc and gVisor's runsc (and the research
case also with the local backend), on the loopback runner: it uploads the workspace stored cut and
says which file is past the limits, and the site's research grading side leaves it out of the copy
its eval scores, as a runner that scores its own copy did."""

from __future__ import annotations

import os
import textwrap
import threading
from pathlib import Path

import pytest
from django.conf import settings as site

from leaderboard.models import Run
from runner.backends.local import LocalBackend
from runner.models import AgentDefinition, JobTask
from runner.research import grading
from tests.job_support import needs_agent_tools
from tests.runner import test_research_jobs
from tests.runner.test_hostile_agents import assert_no_scratch_left, assert_runner_still_healthy, hostile_job, run_task
from tests.runner.test_job_outputs_bounded import SPARSE_SUBMISSIONS, check_bounded_snapshots, sparse_limits
from tests.runner.test_research_jobs import AGENT, TASK, check_graded_run, run_job

HUGE = 3 * (1 << 29)  # 1.5 GiB


@pytest.fixture
def research_task(db, tmp_path, settings):
    """The research task of test_research_jobs imported, for its eval alone."""
    test_research_jobs.import_research_world(tmp_path, settings)


@pytest.fixture
def research_world(loopback_runner, research_task):
    """That task and its scripted agent, on the loopback runner."""
    return loopback_runner


class RunnerWrites:
    """What the runner writes while a block runs: the bytes this process passed to write() (files,
    pipes, sockets: everything) and the peak apparent size of the runner's own folders for its tasks
    (`<scratch>.runner`, where snapshots, staged outputs and grading copies go)."""

    def __enter__(self) -> RunnerWrites:
        self.peak, self.done = 0, threading.Event()
        self.started = _wchar()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.written = _wchar() - self.started
        self.done.set()
        self.thread.join()

    def _sample(self) -> None:
        while not self.done.wait(0.05):
            self.peak = max(self.peak, _apparent(Path(site.RUNNER_WORK_DIR).glob("*.runner")))


def _wchar() -> int:
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["wchar"])


def _apparent(folders) -> int:
    total = 0
    for folder in folders:
        for root, _dirs, names in os.walk(folder):
            for name in names:
                try:
                    info = os.lstat(os.path.join(root, name))
                except OSError:
                    continue
                total += info.st_size if not os.path.islink(os.path.join(root, name)) else 0
    return total


@pytest.mark.docker
@needs_agent_tools
def test_a_sparse_submission_changed_quickly_in_docker_keeps_snapshots_within_the_limits(alice, loopback,
                                                                                          docker_backend, settings):
    sparse_limits(settings)
    job = hostile_job(alice, "SECONDS = 10\n" + textwrap.dedent(SPARSE_SUBMISSIONS))
    with RunnerWrites() as writes:
        outcome, run, _ = run_task(job, loopback, docker_backend)
    assert outcome.status == JobTask.Status.SUCCEEDED, (outcome.error, JobTask.objects.get(run=run).log_tail)
    check_bounded_snapshots(run)
    print(f"snapshots {sum(s.artifact.size for s in run.snapshots.select_related('artifact')):,} bytes; the runner "
          f"wrote {writes.written:,} bytes")
    assert writes.written < 512 << 20, writes.written  # 15+ changes of 48 MiB: all of them would be 720 MiB
    assert_no_scratch_left()
    assert_runner_still_healthy(alice, loopback, docker_backend)


def bounded_research_run(user, world, backend, capture, settings) -> tuple[Run, RunnerWrites]:
    settings.JOB_OUTPUT_FILE_BYTES = 16 << 20
    settings.JOB_OUTPUT_TOTAL_BYTES = 64 << 20
    with RunnerWrites() as writes:
        run = run_job(user, world, backend, capture, steps=3, sleep=0.5, huge_file=HUGE)
    return run, writes


def check_bounded_research_run(run: Run, writes: RunnerWrites) -> None:
    """Graded on what its eval needs; 1.5 GiB never copied: the runner wrote less than 256 MiB in all,
    at most 96 MiB at once in its own folders (64 MiB of outputs staged and the workspace snapshots'
    16 MiB), and each copy that left the file out says so."""
    check_graded_run(run)
    print(f"the runner wrote {writes.written:,} bytes, its folders peaked at {writes.peak:,} bytes")
    assert writes.written < 256 << 20, writes.written
    assert writes.peak <= 96 << 20, writes.peak
    assert sum(run.artifacts.values_list("size", flat=True)) <= (64 << 20) + (16 << 20)
    warnings = "\n".join(run.import_warnings)
    over = "checkpoint.bin: 1,610,612,736 bytes, over the 16,777,216-byte limit per file; left out of"
    assert f"{over} the copy its eval scored" in warnings, warnings
    assert f"{over} the workspace's snapshots" in warnings, warnings
    assert "workspace/checkpoint.bin: 1,610,612,736 bytes, stored cut" in warnings, warnings
    assert run.snapshots.exists() and all(s.status == "graded" for s in run.snapshots.all())


def test_a_research_agent_truncating_a_huge_file_gets_nothing_copied_past_the_limits(
        alice, research_world, django_capture_on_commit_callbacks, settings, monkeypatch):
    scored = []  # the files of each copy an eval scored
    real = grading._score_copy
    monkeypatch.setattr(grading, "_score_copy", lambda backend, root, workdir, *a: scored.append(
        {p.relative_to(workdir / "code").as_posix() for p in (workdir / "code").rglob("*")}) or real(
        backend, root, workdir, *a))
    run, writes = bounded_research_run(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks,
                                       settings)
    check_bounded_research_run(run, writes)
    assert scored and "submission.csv" in scored[0] and not any("checkpoint.bin" in files for files in scored)
    assert not list(Path(site.RUNNER_WORK_DIR).glob("task-*"))
    check_graded_run(run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks))


@pytest.mark.docker
def test_a_research_agent_truncating_a_huge_file_in_docker(alice, research_world, docker_backend,
                                                           django_capture_on_commit_callbacks, settings):
    AgentDefinition.objects.filter(name="research-scripted").update(command=["python3", "-c", AGENT.read_text()])
    run, writes = bounded_research_run(alice, research_world, docker_backend, django_capture_on_commit_callbacks,
                                       settings)
    check_bounded_research_run(run, writes)
    assert_no_scratch_left()
    # its next job runs to a graded run
    check_graded_run(run_job(alice, research_world, docker_backend, django_capture_on_commit_callbacks))


def test_an_eval_that_misses_a_file_left_out_says_so(research_task, tmp_path, settings):
    """A workspace whose submission.csv is past the limits: the eval never sees it, and its error
    names the file and the limit rather than only the eval's own complaint."""
    from leaderboard.models import Competition

    settings.JOB_OUTPUT_FILE_BYTES = 16 << 20
    files = tmp_path / "files"
    files.mkdir()
    with open(files / "submission.csv", "wb") as f:
        f.write(b"id,label\n")
        f.truncate(HUGE)
    started = _wchar()
    score = grading.score_workspace(Competition.objects.get(slug=TASK), files, backend=LocalBackend(),
                                    work=tmp_path / "work", label="oversized")
    assert _wchar() - started < 16 << 20
    assert score.score is None and score.error.startswith("eval.py: "), score.error
    assert score.error.endswith("(the workspace was past the run's output limits: submission.csv: 1,610,612,736 "
                                "bytes, over the 16,777,216-byte limit per file; left out of the copy its eval "
                                "scored)"), score.error
    assert score.notes and not (tmp_path / "work" / "grade-oversized").exists()

"""Every copy the runner makes of an agent's files is held to the run's output limits (files, size per
file, total) by apparent size, so a sparse file counts at its full length and is never copied past
them: the submission's snapshots while the agent runs, a research workspace's snapshots and the copy
its eval scores. What is left out is named in a note; links are never followed."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from runner.host.live import LineTail, SnapshotWatch
from runner.host.output_budget import Budget
from runner.host.secrets import Redactor
from runner.research import sandbox as research_sandbox
from runner.research import workspace

HUGE = 3 * (1 << 29)  # 1.5 GiB, sparse: it takes no disk, a copy of it would take all of it


def written_bytes() -> int:
    """What this process has passed to write() so far (every file, pipe and socket)."""
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["wchar"])


def apparent_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def write(path: Path, size: int, fill: bytes = b"x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(fill * size)


def sparse(path: Path, size: int = HUGE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"id,label\n")
        f.truncate(size)


def test_the_budget_says_which_limit_refuses_a_file():
    budget = Budget(file_bytes=100, total_bytes=250, files=3)
    assert budget.refusal(101) == "101 bytes, over the 100-byte limit per file" and budget.over_file_limit(101)
    budget.take(100)
    budget.take(100)
    assert budget.refusal(60) == "60 bytes, past the 250-byte total (200 already taken)"
    assert not budget.over_file_limit(60) and budget.refusal(50) == ""
    budget.take(50)
    assert budget.refusal(0) == "past the limit of 3 files"
    budget.give_back(150, 2)
    assert (budget.total, budget.count, budget.refusal(100)) == (100, 1, "")


def test_snapshots_stop_at_the_total_and_the_count_with_one_note(tmp_path):
    sub = tmp_path / "sub"
    watch = SnapshotWatch(sub, "submission.csv", Redactor([]), Budget(file_bytes=1000, total_bytes=2500, files=4))
    kept = []
    for n, size in enumerate((900, 900, 900, 500, 90, 80)):  # the third passes the total, the last the count
        write(sub / "submission.csv", size, bytes([ord("a") + n]))
        kept.append(watch.changed())
    assert [len(c) if c else None for c in kept] == [900, 900, None, 500, 90, None]
    assert watch.budget.total == 2390 and watch.budget.count == 4
    assert len(watch.notes) == 1, watch.notes  # one note however many changes were skipped
    assert watch.notes[0].startswith("submission.csv: 2 change(s) not kept as snapshots")
    assert "900 bytes, past the 2,500-byte total" in watch.notes[0] and "the last snapshot kept stays" in watch.notes[0]


def test_a_sparse_submission_counts_at_its_apparent_size_and_is_never_read(tmp_path):
    sub = tmp_path / "sub"
    watch = SnapshotWatch(sub, "submission.csv", Redactor([]), Budget(64 << 20, 128 << 20, 10))
    sparse(sub / "submission.csv")
    read_before = int(dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())["rchar"])
    assert watch.changed() is None
    read = int(dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())["rchar"]) - read_before
    assert read < 1 << 20, read  # refused on its size, before a byte of it was read
    assert "1,610,612,736 bytes, over the 67,108,864-byte limit per file" in watch.notes[0]
    assert watch.budget.total == 0


def test_a_snapshot_that_cannot_be_stored_gives_its_bytes_back(tmp_path):
    sub = tmp_path / "sub"
    watch = SnapshotWatch(sub, "submission.csv", Redactor([]), Budget(1000, 1000, 2))
    write(sub / "submission.csv", 700)
    content = watch.changed()
    watch.give_back(content)
    write(sub / "submission.csv", 800, b"y")
    assert len(watch.changed()) == 800


@pytest.fixture
def agent_workspace(tmp_path) -> Path:
    files = tmp_path / "workspace"
    write(files / "train.py", 1000)
    write(files / "model" / "weights.bin", 3 << 20)
    sparse(files / "huge.bin")
    (tmp_path / "host.txt").write_text("a host file")
    os.symlink(tmp_path / "host.txt", files / "host-link.txt")
    os.symlink(tmp_path, files / "up")
    return files


def test_a_copy_leaves_out_what_is_past_the_limits_and_follows_no_link(agent_workspace, tmp_path):
    target = tmp_path / "copy"
    before = written_bytes()
    copied = workspace.copy_files(agent_workspace, target, skip=set(), budget=Budget(4 << 20, 16 << 20, 100),
                                  what="the copy")
    assert written_bytes() - before < 5 << 20  # the 1.5 GiB file cost nothing
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == [
        "model/weights.bin", "train.py"]
    assert apparent_bytes(target) == 1000 + (3 << 20)
    assert "huge.bin: 1,610,612,736 bytes, over the 4,194,304-byte limit per file; left out of the copy" in copied.notes
    assert any(n.startswith("host-link.txt: skipped, a symbolic link") for n in copied.notes)
    assert any(n.startswith("up: skipped, a symbolic link") for n in copied.notes)
    assert copied.complete  # only a file's own size left something out


def test_a_copy_past_the_total_is_incomplete(agent_workspace, tmp_path):
    copied = workspace.copy_files(agent_workspace, tmp_path / "copy", skip=set(),
                                  budget=Budget(4 << 20, 2 << 20, 100), what="the copy")
    assert not copied.complete and apparent_bytes(tmp_path / "copy") == 1000
    assert "model/weights.bin: 3,145,728 bytes, past the 2,097,152-byte total (0 already taken); left out of " \
           "the copy" in copied.notes


def test_the_grading_copy_is_bounded_and_puts_back_the_read_only_files(agent_workspace, tmp_path):
    env = tmp_path / "env"
    write(env / "train.py", 10, b"t")
    target = tmp_path / "grade"
    before = written_bytes()
    notes = workspace.grading_copy(agent_workspace, env, {"train.py"}, target, Budget(4 << 20, 16 << 20, 100))
    assert written_bytes() - before < 5 << 20
    assert (target / "train.py").read_bytes() == b"t" * 10 and not (target / "huge.bin").exists()
    assert any("huge.bin" in n and "left out of the copy its eval scored" in n for n in notes)


def test_workspace_snapshots_together_stay_within_their_share(tmp_path, settings):
    settings.RESEARCH_SNAPSHOT_EVERY_S = 0
    settings.JOB_OUTPUT_FILE_BYTES = 8 << 20
    settings.JOB_OUTPUT_TOTAL_BYTES = 40 << 20  # the snapshots' share: 10 MiB
    files = tmp_path / "task" / "workspace"
    write(files / "train.py", 100)
    spec = SimpleNamespace(workspace_dir=files, read_only_files=(), runner_dir=tmp_path / "task.runner")
    snapshots = research_sandbox.Snapshots(spec)
    write(files / "a.bin", 4 << 20)
    snapshots.tick(1.0)  # 4 MiB
    sparse(files / "huge.bin")  # left out of every snapshot (over the per-file limit)
    write(files / "train.py", 200)
    snapshots.tick(2.0)  # 4 MiB more
    write(files / "b.bin", 3 << 20)
    snapshots.tick(3.0)  # would be 7 MiB more, past the 10 MiB: not kept, and the last
    write(files / "train.py", 300)
    snapshots.tick(4.0)
    assert [seconds for seconds, _ in snapshots.taken] == [1.0, 2.0]
    assert apparent_bytes(spec.runner_dir) <= 10 << 20 and snapshots.budget.total <= 10 << 20
    assert sorted(p.name for p in (spec.runner_dir / "research-snapshots").iterdir()) == ["000", "001"]
    assert any(n.startswith("huge.bin: 1,610,612,736 bytes, over the 8,388,608-byte limit per file") for n in
               snapshots.notes)
    assert any("no workspace snapshot kept from 3.0 s on" in n for n in snapshots.notes), snapshots.notes


def test_the_live_trajectory_streams_at_most_the_run_total(tmp_path):
    tail = LineTail(tmp_path, "trajectory.jsonl", most=100)
    line = b"x" * 29 + b"\n"  # 30 bytes a line
    (tmp_path / "trajectory.jsonl").write_bytes(line * 2)
    assert [n for n, _ in tail.new_lines()] == [1, 2]
    with open(tmp_path / "trajectory.jsonl", "ab") as f:
        f.write(line * 5)
    assert [n for n, _ in tail.new_lines()] == [3]  # 90 bytes; the fourth line would pass 100
    with open(tmp_path / "trajectory.jsonl", "ab") as f:
        f.write(line * 5)
    assert tail.new_lines() == [] and tail.offset == 210  # nothing more read
    assert tail.notes == ["trajectory.jsonl: more than 100 bytes (the run's output total); line 4 and later not "
                          "streamed"]

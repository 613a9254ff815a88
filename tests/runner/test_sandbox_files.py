"""Reading a sandbox's folders (runner.host.sandbox_files), the live readers (runner.host.live) and redaction
(runner.host.secrets.Redactor), without an engine: links, FIFOs and folders where files should be."""

from __future__ import annotations

import base64
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.host import sandbox_files
from runner.host.live import LineTail, SnapshotWatch
from runner.host.output_budget import Budget
from runner.host.secrets import Redactor


@pytest.fixture
def box(tmp_path):
    root = tmp_path / "code"
    (root / "sub").mkdir(parents=True)
    (root / "ok.txt").write_text("fine")
    (root / "sub" / "inner.txt").write_text("inner")
    (tmp_path / "outside.txt").write_text("host secret")
    os.symlink(tmp_path / "outside.txt", root / "link.txt")
    os.symlink(tmp_path, root / "dirlink")
    os.symlink("/proc/self/environ", root / "environ")
    os.mkfifo(root / "pipe")
    return root


def test_only_regular_files_are_listed_and_the_rest_is_named(box):
    listing = sandbox_files.walk(box)
    assert [(e.rel, e.size) for e in listing.files] == [("ok.txt", 4), ("sub/inner.txt", 5)]
    assert sorted(listing.skipped) == [
        "dirlink: skipped, a symbolic link, not a regular file",
        "environ: skipped, a symbolic link, not a regular file",
        "link.txt: skipped, a symbolic link, not a regular file", "pipe: skipped, a FIFO, not a regular file"]


@pytest.mark.parametrize("rel, what", [
    ("link.txt", "a symbolic link"), ("environ", "a symbolic link"), ("pipe", "a FIFO"), ("sub", "a folder"),
    ("dirlink/outside.txt", "dirlink is a symbolic link, not a folder"), ("../outside.txt", "not a path inside"),
    ("/etc/passwd", "not a path inside"),
])
def test_open_regular_refuses_everything_but_a_regular_file_inside(box, rel, what):
    started = time.monotonic()
    with pytest.raises(sandbox_files.NotRegular, match=what):
        sandbox_files.open_regular(box, rel)
    assert time.monotonic() - started < 1  # a FIFO with no writer never blocks the open


def test_a_hard_link_is_never_read_nor_listed_wherever_it_lies(box, tmp_path):
    (box / "sub" / "deeper").mkdir()
    os.link(tmp_path / "outside.txt", box / "sub" / "deeper" / "hard.txt")  # another name of a host file
    os.link(box / "ok.txt", box / "ok-again.txt")  # both names of one file are then suspect
    for rel in ("sub/deeper/hard.txt", "ok.txt", "ok-again.txt"):
        with pytest.raises(sandbox_files.NotRegular, match=f"{rel} is a hard link \\(2 names\\)"):
            sandbox_files.open_regular(box, rel)
    listing = sandbox_files.walk(box)
    assert [e.rel for e in listing.files] == ["sub/inner.txt"]
    assert {"ok.txt: skipped, a hard link (2 names), not a regular file",
            "sub/deeper/hard.txt: skipped, a hard link (2 names), not a regular file"} <= set(listing.skipped)
    assert [e.rel for e in sandbox_files.walk(box, hard_links=True).files] == [
        "ok-again.txt", "ok.txt", "sub/deeper/hard.txt", "sub/inner.txt"]  # counted, for the measured quota


def test_open_regular_reads_files_below_the_root(box):
    with sandbox_files.open_regular(box, "sub/inner.txt") as f:
        assert f.read() == b"inner"
    with pytest.raises(FileNotFoundError):
        sandbox_files.open_regular(box, "missing.txt")


def test_a_linked_root_folder_is_refused(box, tmp_path):
    os.symlink(box, tmp_path / "rootlink")
    with pytest.raises(sandbox_files.NotRegular):
        sandbox_files.open_regular(tmp_path / "rootlink", "ok.txt")
    assert sandbox_files.walk(tmp_path / "rootlink").files == []


def test_the_line_tail_reads_each_byte_once_and_drops_an_overlong_line(tmp_path):
    path = tmp_path / "trajectory.jsonl"
    tail = LineTail(tmp_path, path.name, line_limit=1000, per_tick=300)
    path.write_bytes(b"one\ntw")
    assert tail.new_lines() == [(1, b"one")]
    with open(path, "ab") as f:
        f.write(b"o\n" + b"x" * 2500)
    lines = []
    for _ in range(12):
        lines += tail.new_lines()
    assert lines == [(2, b"two")] and tail.offset == path.stat().st_size and tail.partial == b""
    with open(path, "ab") as f:
        f.write(b"x\nthree\n")
    assert tail.new_lines() == [(4, b"three")]  # line 3 was too long: dropped, numbering kept
    assert tail.notes == ["trajectory.jsonl line 3: longer than 1,000 bytes, not streamed"]


def test_the_snapshot_watch_skips_links_and_unchanged_files(tmp_path):
    (tmp_path / "answers.csv").write_text("id,y\n1,secret\n")
    watch = SnapshotWatch(tmp_path / "sub", "submission.csv", Redactor([]), Budget(100, 1000, 10))
    (tmp_path / "sub").mkdir()
    os.symlink(tmp_path / "answers.csv", tmp_path / "sub" / "submission.csv")
    assert watch.changed() is None and "symbolic link" in watch.notes[0]
    os.unlink(tmp_path / "sub" / "submission.csv")
    (tmp_path / "sub" / "submission.csv").write_text("id,y\n1,0\n")
    assert watch.changed() == b"id,y\n1,0\n"
    assert watch.changed() is None
    (tmp_path / "sub" / "submission.csv").write_text("x" * 101)
    assert watch.changed() is None and "over the 100-byte limit per file" in watch.notes[-1]


SECRET = "sk-test-Zq81mVx0pL"


@settings(max_examples=200, deadline=None)
@given(before=st.binary(max_size=200), after=st.binary(max_size=200), sizes=st.lists(st.integers(1, 40), min_size=1))
def test_streamed_redaction_equals_redacting_the_whole(before, after, sizes):
    redactor = Redactor([SECRET])
    data = before + SECRET.encode() + after + SECRET.encode()
    chunks, at = [], 0
    for size in sizes * (len(data) // max(1, sum(sizes)) + 1):
        chunks.append(data[at:at + size])
        at += size
    chunks.append(data[at:])
    streamed = b"".join(redactor.stream(chunks))
    assert streamed == redactor.bytes(data)
    assert SECRET.encode() not in streamed


def pieces_of(value: bytes, n: int = 4) -> set[bytes]:
    return {value[i:i + n] for i in range(len(value) - n + 1)}


@settings(max_examples=100, deadline=None)
@given(filler=st.sampled_from([b".", b" ", b"\n", b"#"]), sizes=st.lists(st.integers(1, 30), min_size=1, max_size=5))
def test_a_value_cut_in_two_by_a_limit_leaves_no_piece_at_the_cut(filler, sizes):
    redactor = Redactor([SECRET])
    data = filler * 50 + SECRET.encode() + filler * 50
    for at in range(40, 80):
        head, tail = data[:at], data[at:]  # stored cut to its first / its last bytes
        chunks = [tail[i:i + sizes[0]] for i in range(0, len(tail), sizes[0])]
        kept_end = b"".join(redactor.stream(chunks, cut_start=True))
        kept_start = b"".join(redactor.stream([head[i:i + sizes[-1]] for i in range(0, len(head), sizes[-1])],
                                              cut_end=True))
        shown = redactor.text(tail.decode(), cut_start=True).encode()
        for out in (kept_end, kept_start, shown):
            assert not pieces_of(SECRET.encode()) & pieces_of(out), (at, out)
        if at < 50 or at > 50 + len(SECRET):  # no value cut: the edges leave the text as it is
            assert kept_end == shown == redactor.bytes(tail) and kept_start == redactor.bytes(head)
        assert b"".join(redactor.stream(chunks)) == redactor.bytes(tail)  # without the flags, as before


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"abc", b"Authorization: "])
def test_base64_at_any_alignment_is_redacted(prefix):
    encoded = base64.b64encode(prefix + SECRET.encode() + b"!")
    out = Redactor([SECRET]).bytes(encoded)
    assert out.count(b"[secret]") == 1
    # of the secret's base64 characters, at most the two at each edge (shared with its neighbours) remain
    removed = len(encoded) - (len(out) - len(b"[secret]"))
    assert removed >= len(SECRET) * 8 // 6 - 4


def test_short_values_are_not_redacted():
    assert Redactor(["abc"]).bytes(b"abcdef") == b"abcdef"


@pytest.mark.parametrize("rewrite", [b"id,y\n1,0\n", b"z" * (3 << 20), b"y" * (4 << 20)],
                         ids=["cut", "same size", "grown"])
def test_a_submission_rewritten_while_it_is_read_is_not_kept_torn(tmp_path, monkeypatch, rewrite):
    """The agent reopens submission.csv for writing while the watch copies it: the copy is dropped
    (not a snapshot of half of one file and half of another) and the file is read again next tick."""
    (tmp_path / "submission.csv").write_bytes(b"x" * (3 << 20))
    watch = SnapshotWatch(tmp_path, "submission.csv", Redactor([]), Budget(64 << 20, 256 << 20, 10))
    real = sandbox_files.read_at_most

    def rewritten_after_the_first_chunk(file, limit, chunk=1 << 20):
        for n, data in enumerate(real(file, limit, chunk)):
            if n == 1:
                time.sleep(0.01)  # past the file system's clock tick, as a real rewrite is
                (tmp_path / "submission.csv").write_bytes(rewrite)
            yield data

    monkeypatch.setattr(sandbox_files, "read_at_most", rewritten_after_the_first_chunk)
    assert watch.changed() is None and watch.budget.total == 0 and not watch.notes
    monkeypatch.setattr(sandbox_files, "read_at_most", real)
    assert watch.changed() == rewrite


def test_changes_past_the_snapshots_total_are_counted_in_one_note_and_the_last_kept_stays(tmp_path):
    watch = SnapshotWatch(tmp_path, "submission.csv", Redactor([]), Budget(100, 150, 10))
    (tmp_path / "submission.csv").write_bytes(b"a" * 80)
    assert watch.changed() == b"a" * 80
    for n, content in enumerate([b"b" * 80, b"c" * 90, b"d" * 80], start=1):
        time.sleep(0.01)
        (tmp_path / "submission.csv").write_bytes(content)
        assert watch.changed() is None and watch.changed() is None  # an unchanged file is not counted again
        assert watch.skipped == n and len(watch.notes) == 1, watch.notes
    assert watch.notes[0] == ("submission.csv: 3 change(s) not kept as snapshots, past the snapshots' share of the "
                              "run's output limits (the first: 80 bytes, past the 150-byte total (80 already "
                              "taken)); the last snapshot kept stays")
    (tmp_path / "submission.csv").write_bytes(b"e" * 70)  # one that fits is kept again
    assert watch.changed() == b"e" * 70 and watch.budget.total == 150

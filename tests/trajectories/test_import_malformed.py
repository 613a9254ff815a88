"""Truncated, corrupt and hostile files import what is valid and say exactly what was not."""

import json
import shutil
import zipfile

import pytest

from leaderboard.trajectories.importers import TrajectoryError, detect, read_trajectories
from leaderboard.trajectories.importers.jsonl import header_line, step_line
from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all

AIDE = TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json"
OPENHANDS = TRAJECTORIES_DIR / "openhands" / "basic_gui_mode.json"
TRACE = TRAJECTORIES_DIR / "mlagentbench" / "gemini-pro_cifar10_0_trace.json"
EVAL = TRAJECTORIES_DIR / "inspect" / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"


def jsonl(path, lines: list[bytes]):
    path.write_bytes(header_line({"task": "t"}) + b"".join(lines))
    return path


def good(i):
    return step_line({"kind": "message", "text": f"step {i}"})


def test_truncated_jsonl_keeps_complete_lines(db, tmp_path):
    path = jsonl(tmp_path / "t.jsonl", [good(0), good(1), good(2)[:10]])
    [(run, steps)] = import_all(path)
    assert run.n_steps == 2
    assert len(run.import_warnings) == 1 and run.import_warnings[0].startswith("line 4: not valid JSON")


def test_bad_lines_are_named_and_skipped(db, tmp_path):
    lines = [good(0), b"{not json\n", b"[1, 2]\n", b'{"text": "no kind"}\n', good(4),
             step_line({"kind": "message", "parent_index": 9}), step_line({"kind": "dance"}),
             step_line({"kind": "plan", "data": [1, 2]})]
    [(run, steps)] = import_all(jsonl(tmp_path / "t.jsonl", lines))
    warnings = run.import_warnings
    assert [w.split(":")[0] for w in warnings] == ["line 3", "line 4", "line 5", "line 7", "step 3", "line 9"]
    assert "parent_index 9" in warnings[3]
    assert "unknown kind 'dance'" in warnings[4]
    assert run.n_steps == len(steps) == 5
    assert steps[3].kind == "message" and steps[3].data["original_kind"] == "dance"
    assert steps[4].data == {"value": [1, 2]}


def test_binary_junk_is_escaped_and_flagged(db, tmp_path):
    raw = b'{"kind": "command", "text": "ok \\u0000 \\u001b[31mred", "data": {"stdout": "\\udcff"}}\n'
    invalid_utf8 = b'{"kind": "observation", "text": "\xff\xfe bytes"}\n'
    [(run, steps)] = import_all(jsonl(tmp_path / "t.jsonl", [raw, good(1), invalid_utf8]))
    junk = steps[0]
    assert junk.data["binary"] is True
    assert junk.text == "ok \\x00 \x1b[31mred"  # NUL escaped, ANSI colour kept
    assert junk.data["stdout"] == "\\xff"
    assert "binary" not in steps[1].data
    assert steps[2].text == "\\xff\\xfe bytes" and steps[2].data["binary"] is True
    assert run.n_steps == 3 and run.import_warnings == []


def test_html_is_stored_as_written(db, tmp_path):
    script = "<script>alert(1)</script>"
    [(_, steps)] = import_all(jsonl(tmp_path / "t.jsonl", [step_line({"kind": "message", "text": script})]))
    assert steps[0].text == script and "binary" not in steps[0].data


def test_truncated_aide_journal(db, tmp_path):
    text = AIDE.read_bytes()
    cut = tmp_path / "journal.json"
    cut.write_bytes(text[: len(text) // 2])
    complete = len(json.loads(text)["nodes"])
    assert detect(cut) == "aide"
    [(run, steps)] = import_all(cut)
    assert 0 < run.n_steps < 4 * complete and run.n_steps % 4 == 0
    assert any("truncated" in w for w in run.import_warnings)


def test_truncated_openhands_array(db, tmp_path):
    events = json.loads(OPENHANDS.read_text())
    text = OPENHANDS.read_text()
    cut_at = text.index('"id": 10,')
    cut = tmp_path / "events.json"
    cut.write_text(text[:cut_at])
    [(run, steps)] = import_all(cut)
    assert run.n_steps == 10 < len(events)
    assert run.import_warnings and "after item 10" in run.import_warnings[0]


def test_truncated_mlagentbench_trace(db, tmp_path):
    text = TRACE.read_text()
    cut = tmp_path / "trace.json"
    cut.write_text(text[: text.index('"Execute Script"')])
    [(run, steps)] = import_all(cut)
    assert sum(s.kind == "action" for s in steps) == 4
    assert run.import_warnings


def test_corrupt_eval_sample(db, tmp_path):
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(EVAL) as src, zipfile.ZipFile(broken, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            dst.writestr(name, data[:20] if name == "samples/3_epoch_1.json" else data)
    saved = import_all(broken)
    assert len(saved) == 10
    bad = [run for run, steps in saved if not steps]
    assert len(bad) == 1 and "samples/3_epoch_1.json" in bad[0].import_warnings[0]


def test_renamed_files_are_detected_by_content(tmp_path):
    for source, fmt in [(AIDE, "aide"), (OPENHANDS, "openhands"), (TRACE, "mlagentbench"), (EVAL, "inspect")]:
        renamed = tmp_path / f"upload-{fmt}.dat"
        shutil.copy(source, renamed)
        assert detect(renamed) == fmt


@pytest.mark.parametrize("content", [b"", b"hello world\n", b"\x00\x01\x02\xff", b'{"a": 1}', b"[1, 2, 3]"])
def test_unreadable_files_raise_a_clear_error(tmp_path, content):
    path = tmp_path / "junk"
    path.write_bytes(content)
    assert detect(path) is None
    with pytest.raises(TrajectoryError, match="not a trajectory format"):
        list(read_trajectories(path))


def test_header_only_jsonl_is_an_empty_trajectory(db, tmp_path):
    [(run, steps)] = import_all(jsonl(tmp_path / "t.jsonl", []))
    assert run.n_steps == 0 and steps == [] and run.import_warnings == []


def test_warnings_are_capped(db, tmp_path):
    [(run, _)] = import_all(jsonl(tmp_path / "t.jsonl", [b"oops\n"] * 500))
    assert len(run.import_warnings) == 201
    assert run.import_warnings[-1] == "... and 300 more warnings"

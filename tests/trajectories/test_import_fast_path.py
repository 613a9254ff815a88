"""The JSONL fast paths (a valid line stored as written; a line proven junk-free skipping sanitize's scan)
store exactly what the general path does."""

import json

import orjson
import pytest

from leaderboard.trajectories.importers import base, jsonl, read_trajectories, save_steps
from tests.trajectories.import_support import make_run, stored_rows

TRICKY_TEXT = "tab\there, comma, \"quotes\"\r\nCRLF\n\\.\n\\N and a backslash \\ é 😀 \x1b[31mred\x1b[0m"

LINES = [
    jsonl.header_line({"task": "t", "started_at": "2026-01-01T00:00:00Z"}),
    jsonl.step_line({"index": 0, "kind": "plan", "t": 0, "title": "Plan", "text": TRICKY_TEXT}),
    jsonl.step_line({"kind": "code", "t": 1.5, "data": {"file": "a.py", "content": "x = 1\n"}}),
    jsonl.step_line({"kind": "code", "t": 2, "parent_index": 1, "data": {"file": "a.py", "content": "x = 2\n"}}),
    # ensure_ascii: non-ASCII as \uXXXX escapes, an emoji as a surrogate pair (flagged, clean in the end)
    json.dumps({"kind": "message", "text": "café 😀", "data": {"role": "user"}}).encode() + b"\n",
    b'{"kind": "command", "text": "escaped backslash then b: \\\\b", "data": {"stdout": "\\\\u0000"}}\n',
    b'{"kind": "command", "title": "nul", "text": "a\\u0000b", "data": {"stderr": "bell\\u0007", "k\\u0001": 1}}\n',
    b'{"kind": "observation", "text": "DEL \x7f and \\u007f", "data": {"\\b": "\\f"}}\n',
    b'{"kind": "error", "text": "not utf-8 \xff\xfe here"}\n',
    b"{not json at all\n",
    b"\n",
    jsonl.step_line({"kind": "teleport", "index": 7, "title": {"not": "a string"}, "data": [1, 2]}),
    jsonl.step_line({"kind": "score", "t": 3, "score": 0.5, "parent_index": 99, "data": {"value": 0.5}}),
    jsonl.step_line({"kind": "llm", "title": "x" * 600, "data": {"model": "m", "tokens_in": 3, "tokens_out": 1,
                                                               "cost": 0.25, "nested": {"deep": [1.5, None, True]}}}),
]


def _import(db, tmp_path, name):
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(b"".join(LINES))
    run = make_run()
    [parsed] = read_trajectories(path)
    save_steps(run, parsed)
    run.refresh_from_db()
    rows = stored_rows(run)
    return run, rows


def test_fast_and_general_path_store_identical_rows(db, tmp_path, monkeypatch):
    fast_run, fast = _import(db, tmp_path, "fast")
    monkeypatch.setattr(jsonl, "_suspect", lambda buffer: True)  # no line stored as it was written
    monkeypatch.setattr(jsonl, "json_line_is_clean", lambda raw: False)  # every line through the full scan
    slow_run, slow = _import(db, tmp_path, "slow")
    assert fast == slow
    assert fast_run.import_warnings == slow_run.import_warnings
    assert (fast_run.tokens_in, fast_run.cost_usd, fast_run.duration_s) == (slow_run.tokens_in, slow_run.cost_usd,
                                                                            slow_run.duration_s)
    by_title = {row[2]: row for row in fast}
    assert by_title["Plan"][3] == TRICKY_TEXT  # stored exactly as written, through INSERT or COPY
    assert "binary" not in by_title["Plan"][4]
    assert by_title["nul"][3] == "a\\x00b" and by_title["nul"][4]["binary"] is True
    assert by_title["nul"][4]["stderr"] == "bell\\x07"


def test_malformed_line_in_the_middle_warns_and_keeps_the_rest(db, tmp_path):
    run, rows = _import(db, tmp_path, "t")
    assert any(w.startswith("line 10: not valid JSON") for w in run.import_warnings), run.import_warnings
    assert len(rows) == len(LINES) - 3  # header, the malformed line and the blank line store nothing
    assert [r[0] for r in rows] == list(range(len(rows)))
    kinds = [r[1] for r in rows]
    assert kinds[:3] == ["plan", "code", "code"] and kinds[-2:] == ["score", "llm"]
    junk = [r for r in rows if r[4].get("binary")]
    assert {r[1] for r in junk} == {"command", "observation", "error"}  # NUL/BEL, DEL, invalid UTF-8
    unknown = next(r for r in rows if r[4].get("original_kind") == "teleport")
    assert unknown[1] == "message" and unknown[4]["value"] == [1, 2]
    assert rows[2][4]["diff"].endswith("-x = 1\n+x = 2\n")
    assert len(rows[-1][2]) == base.TITLE_MAX
    assert rows[-2][6] is None  # parent_index 99 dropped


@pytest.mark.parametrize("raw, clean", [
    (b'{"text": "plain \\n \\t \\" \\\\ \\u00e9 \\u0080"}', True),
    (b'{"text": "\\u0000"}', False),
    (b'{"text": "\\u001F"}', False),
    (b'{"text": "\\u007f"}', False),
    (b'{"text": "\\b"}', False),
    (b'{"text": "\\f"}', False),
    (b'{"text": "\\ud83d\\ude00"}', False),  # a valid pair: a harmless false positive
    (b'{"text": "\x7f"}', False),
])
def test_json_line_is_clean(raw, clean):
    orjson.loads(raw)
    assert base.json_line_is_clean(raw) is clean


def test_a_chunk_is_suspect_exactly_when_the_regular_expression_says_so():
    import random

    rng = random.Random(5)
    for _ in range(2000):
        buffer = bytes(rng.choice(b'\\ubf/nx"\r\x7f') if rng.random() < 0.2 else rng.choice(b"abc \n")
                       for _ in range(rng.randint(0, 40)))
        assert jsonl._suspect_chunk(buffer) == jsonl._suspect(buffer), buffer
    assert jsonl._suspect_chunk(b"a\\\\n \\/") and not jsonl._suspect_chunk(b"a\\\\n \\\"\\t x\\")

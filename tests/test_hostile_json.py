"""Format detection stays cheap on hostile JSON: 100,000 nested brackets have no shape instead of
costing minutes (issue 9, item 4), and what real formats look like is unaffected."""

from __future__ import annotations

import pytest

from leaderboard.importers import detect
from leaderboard.importers.base import MAX_JSON_DEPTH, json_shape, nesting_depth
from tests.test_import_support import TRAJECTORIES_DIR


@pytest.mark.parametrize("text", [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000])
def test_deeply_nested_json_has_no_shape(tmp_path, text):
    assert json_shape(text[: 1 << 20]) is None
    path = tmp_path / "journal.json"
    path.write_bytes(text)
    assert detect(path) is None


@pytest.mark.parametrize(("text", "depth"), [
    (b"{}", 1), (b"[[1], [2, [3]]]", 3), (b'{"a": "[[[[[[", "b": ["]]]"]}', 2), (b'"\\"[[["', 0),
    (b'[{"x": "\\\\"}, [[]]]', 3), (b"[[[", 3),
])
def test_nesting_depth_ignores_brackets_in_strings(text, depth):
    assert nesting_depth(text) == depth


def test_real_trajectories_are_still_detected():
    assert detect(TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json") == "aide"
    assert detect(TRAJECTORIES_DIR / "openhands" / "basic_gui_mode.json") == "openhands"
    assert nesting_depth((TRAJECTORIES_DIR / "openhands" / "basic_gui_mode.json").read_bytes()) < MAX_JSON_DEPTH

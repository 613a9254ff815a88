"""Numbers no column holds in a trajectory (1e999, Infinity, NaN, huge integers, strings where counts
go) are dropped or refused with a warning: the import ends, the run's numbers are finite and in
range, and the API can render it. (An infinity used to reach int() in a worker: OverflowError.)"""

from __future__ import annotations

import json
import math

import pytest

from leaderboard.trajectories.importers.base import MAX_COUNT, TrajectoryMeta, to_count
from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all
from tests.trajectories.test_import_jsonl import write

HOSTILE = ["1e999", "-1e999", "Infinity", "-Infinity", "NaN", "1e308", "-5", "1.5", str(10**30), '"12abc"',
           "[1]", "{}", "true"]


def _assert_finite_run(run) -> None:
    for name in ("tokens_in", "tokens_out"):
        value = getattr(run, name)
        assert value is None or (type(value) is int and 0 <= value <= MAX_COUNT), (name, value)
    for name in ("cost_usd", "duration_s"):
        value = getattr(run, name)
        assert value is None or math.isfinite(value), (name, value)


@pytest.mark.parametrize("number", HOSTILE)
def test_jsonl_numbers_out_of_range_are_dropped(db, client, tmp_path, number):
    path = tmp_path / "t.jsonl"
    header = {"task": "t", "agent": "a", "model": "m"}
    text = json.dumps(header) + "\n" + "\n".join([
        '{"kind": "llm", "t": N, "score": N, "data": {"tokens_in": N, "tokens_out": N, "cost": N}}',
        '{"kind": "llm", "t": 1.0, "data": {"tokens_in": 1e308, "tokens_out": 9223372036854775807, "cost": 1e308}}',
        '{"kind": "command", "t": N, "parent_index": N, "data": {"duration": N, "exit_code": N}}',
    ]).replace("N", number) + "\n"
    header_line = write(tmp_path / "h.jsonl", header, []).read_bytes()
    path.write_bytes(header_line + text.split("\n", 1)[1].encode())
    [(run, steps)] = import_all(path)
    _assert_finite_run(run)
    assert client.get(f"/api/runs/{run.pk}/").status_code == 200
    assert client.get(f"/api/runs/{run.pk}/steps/").status_code == 200


@pytest.mark.parametrize("number", HOSTILE)
def test_openhands_usage_out_of_range_is_dropped(db, client, tmp_path, number):
    events = json.loads((TRAJECTORIES_DIR / "openhands" / "basic_gui_mode.json").read_text())
    text = json.dumps(events)
    text = text.replace('"prompt_tokens": ', f'"prompt_tokens": {number}, "was": ')
    text = text.replace('"completion_tokens": ', f'"completion_tokens": {number}, "was": ')
    path = tmp_path / "events.json"
    path.write_text(text)
    for parsed in import_all(path):
        _assert_finite_run(parsed[0])


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 1e300, -1, 1.5, 10**30, "12", "x", [1], True])
def test_to_count_takes_only_whole_counts_in_range(value):
    count = to_count(value)
    assert count is None or (type(count) is int and 0 <= count <= MAX_COUNT)
    if value == "12" or value == 10**30 or value == 1e300:
        assert count == (12 if value == "12" else None)


def test_token_and_cost_totals_stay_in_range():
    meta = TrajectoryMeta()
    for _ in range(3):
        meta.add_tokens(MAX_COUNT, MAX_COUNT, 1e308)
    totals = meta.totals()
    assert totals["tokens_in"] is None and totals["tokens_out"] is None and totals["cost_usd"] is None
    meta = TrajectoryMeta()
    meta.add_tokens(10, float("inf"), float("nan"))
    meta.add_tokens("5", None, 0.5)
    assert (meta.tokens_in, meta.tokens_out, meta.cost_usd) == (15, None, 0.5)
    assert meta.totals()["tokens_in"] == 15


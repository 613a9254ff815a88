"""Numbers no column holds in a trajectory (1e999, Infinity, NaN, huge integers, strings where counts
go) are dropped or refused with a warning: the import ends, the run's numbers are finite and in
range, and the API can render it. (An infinity used to reach int() in a worker: OverflowError.)"""

from __future__ import annotations

import json
import math
import re
import shutil
import zipfile

import pytest

from leaderboard.trajectories.importers.base import MAX_COUNT, TrajectoryMeta, to_count
from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all, stored_steps
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



# Every JSON format the site imports, its real fixture with every number replaced: timestamps, usage,
# costs, scores, durations, step counters. (The JSONL and OpenHands tests above aim at named fields.)
FORMAT_FIXTURES = {"aide": "aide/translucent-spaniel_journal.json", "inspect": "inspect/log_read_sample.json",
                   "mlagentbench": "mlagentbench/gemini-pro_cifar10_0_trace.json",
                   "openhands": "openhands/basic_gui_mode.json",
                   "sweagent": "swe-agent/6e44b9__sweagenttestrepo-1c2844.traj"}
_NUMBER = re.compile(rb'(":\s*)-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=\s*[,}\]])')


def _hostile(text: bytes, number: str) -> bytes:
    replaced, n = _NUMBER.subn(rb"\g<1>" + number.encode(), text)
    assert n > 0, "the fixture has no numbers to replace"
    return replaced


def _assert_importable(client, path, expected_format: str, clean_path) -> None:
    """Imported as the clean file is, step for step (a repaired number is no reason to lose a step),
    every number finite, and every page and answer about it renders."""
    saved = import_all(path)
    assert [run.n_steps for run, _ in saved] == [run.n_steps for run, _ in import_all(clean_path)]
    for run, _ in saved:
        _assert_finite_run(run)
        assert run.trajectory_format == expected_format
        for url in (f"/api/runs/{run.pk}/", f"/api/runs/{run.pk}/steps/", f"/runs/{run.pk}/",
                    f"/runs/{run.pk}/trajectory.jsonl"):
            assert client.get(url).status_code == 200, url
        for step in stored_steps(run):
            for value in (step.t, step.score):
                assert value is None or math.isfinite(value), (step.index, value)


@pytest.mark.parametrize("number", ["1e999", "-1e999", "Infinity", "NaN", "1e308", str(10**30)])
@pytest.mark.parametrize("fmt", sorted(FORMAT_FIXTURES))
def test_every_format_with_numbers_no_column_holds_imports_finite(db, client, tmp_path, fmt, number):
    source = TRAJECTORIES_DIR / FORMAT_FIXTURES[fmt]
    path = tmp_path / source.name
    path.write_bytes(_hostile(source.read_bytes(), number))
    if fmt == "mlagentbench":  # its main log beside it, as the fixture keeps it
        shutil.copy(source.with_name("gemini-pro_cifar10_0_main_log"), tmp_path)
    _assert_importable(client, path, fmt, source)


@pytest.mark.parametrize("number", ["1e999", "NaN", "-1e999"])
def test_an_inspect_eval_archive_with_numbers_no_column_holds_imports_finite(db, client, tmp_path, number):
    source = TRAJECTORIES_DIR / "inspect" / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
    path = tmp_path / source.name
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w") as hostile:
        for member in original.namelist():
            data = original.read(member)
            hostile.writestr(member, _hostile(data, number) if member.endswith(".json") and _NUMBER.search(data)
                             else data)
    _assert_importable(client, path, "inspect", source)


@pytest.mark.parametrize("number", ["1e999", "NaN"])
def test_a_run_folder_with_numbers_no_column_holds_imports_finite(db, client, tmp_path, number):
    from tests.trajectories.test_import_mlebench_run import JOURNAL, run_folder

    root = run_folder(tmp_path / "hostile", {"journal.json": _hostile(JOURNAL.read_bytes(), number)})
    _assert_importable(client, root, "aide", run_folder(tmp_path / "clean", {"journal.json": JOURNAL.read_bytes()}))


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
def test_the_repairing_reader_keeps_strings_and_replaces_only_numbers_no_parser_takes(chunk, monkeypatch):
    """Chunks cut strings, escapes and words anywhere: the repaired text parses, has the same strings
    and the finite numbers it had, and null where a number was not finite or past 64 bits."""
    import io
    import random

    import ijson

    from leaderboard.trajectories.importers import numbers

    monkeypatch.setattr(numbers, "CHUNK", chunk)
    tricky = ['NaN in "a" string \\ Infinity 1e999 \\', "\\", '"', "x" * 50, "1" * 30]
    values = [math.nan, math.inf, -math.inf, 10**30, -(10**40), 1.5, 2**63 - 1, -(2**63), 1e308, True, None, *tricky]
    rng = random.Random(chunk)
    for _ in range(100):
        value = {"a": [rng.choice(values) for _ in range(rng.randint(0, 12))], 'k\\"': rng.choice(values),
                 "Infinity": {"NaN": rng.choice(values)}}
        text = json.dumps(value).encode()
        out = io.BufferedReader(numbers._RepairingReader(io.BytesIO(text)), 16).read()
        assert out == numbers.repaired(text)
        parsed = next(ijson.items(io.BytesIO(out), "", use_float=True))
        expected = json.loads(text, parse_constant=lambda _: None,
                              parse_int=lambda s: int(s) if abs(int(s)) < 2**63 else None)
        assert json.dumps(parsed) == json.dumps(expected)

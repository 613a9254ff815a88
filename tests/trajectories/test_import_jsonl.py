import json

from leaderboard.models import Trajectory
from leaderboard.trajectories.importers import detect, read_trajectories, save_steps
from leaderboard.trajectories.importers.jsonl import header_line, step_line
from tests.trajectories.import_support import import_all, make_run, stored_steps


def write(path, header, steps):
    with open(path, "wb") as f:
        f.write(header_line(header))
        for step in steps:
            f.write(step_line(step))
    return path


STEPS = [
    {"kind": "plan", "t": 0.0, "title": "Plan", "text": "Try a baseline."},
    {"kind": "llm", "t": 1.0, "text": "...", "data": {"model": "gpt-4o", "tokens_in": 100, "tokens_out": 20,
                                                     "cost": 0.01}},
    {"kind": "code", "t": 2.0, "data": {"file": "train.py", "content": "a = 1\n"}},
    {"kind": "command", "t": 3.0, "data": {"command": "python train.py", "stdout": "ok", "stderr": "",
                                           "exit_code": 0, "duration": 0.5}},
    {"kind": "code", "t": 4.0, "parent_index": 2, "data": {"file": "train.py", "content": "a = 2\n"}},
    {"kind": "llm", "t": 5.0, "data": {"model": "gpt-4o", "tokens_in": 50, "tokens_out": 5, "cost": 0.005}},
    {"kind": "score", "t": 6.0, "score": 0.8, "data": {"metric": "accuracy", "value": 0.8, "maximize": True}},
]


def test_detected_by_header_not_name(tmp_path):
    path = write(tmp_path / "whatever.bin", {"task": "t"}, STEPS)
    assert detect(path) == "jsonl"


def test_steps_and_header_are_stored(db, tmp_path):
    path = write(tmp_path / "t.jsonl", {"task": "spaceship-titanic", "agent": "a", "model": "m",
                                        "started_at": "2026-01-01T00:00:00Z"}, STEPS)
    [(run, steps)] = import_all(path)
    assert run.n_steps == len(STEPS) == len(steps)
    assert [s.kind for s in steps] == [s["kind"] for s in STEPS]
    assert [s.index for s in steps] == list(range(len(STEPS)))
    assert steps[4].parent_index == 2
    assert steps[6].score == 0.8
    assert run.task_name == "spaceship-titanic" and run.started_at.year == 2026
    assert (run.tokens_in, run.tokens_out) == (150, 25)  # summed from llm steps
    assert abs(run.cost_usd - 0.015) < 1e-9
    assert run.duration_s == 6.0
    assert run.import_warnings == []


def test_code_diff_filled_from_previous_version(db, tmp_path):
    path = write(tmp_path / "t.jsonl", {}, STEPS)
    [(_, steps)] = import_all(path)
    assert steps[2].data["diff"] == ""  # a new file
    assert "-a = 1\n+a = 2\n" in steps[4].data["diff"]


def test_header_totals_win_over_sums(db, tmp_path):
    path = write(tmp_path / "t.jsonl", {"tokens_in": 7, "tokens_out": 3, "cost_usd": 1.5, "duration_s": 99}, STEPS)
    [(run, _)] = import_all(path)
    assert (run.tokens_in, run.tokens_out, run.cost_usd, run.duration_s) == (7, 3, 1.5, 99)


def test_saved_in_batches_and_reimport_replaces(db, tmp_path):
    path = write(tmp_path / "t.jsonl", {}, [{"kind": "message", "text": str(i)} for i in range(2503)])
    run = make_run()
    [parsed] = read_trajectories(path)
    assert save_steps(run, parsed) == 2503
    first_file = run.trajectory.file
    [parsed] = read_trajectories(path)
    assert save_steps(run, parsed) == 2503
    run.refresh_from_db()
    steps = stored_steps(run)
    assert len(steps) == 2503 and steps[-1].text == "2502" and [s.index for s in steps] == list(range(2503))
    assert run.trajectory.file != first_file and Trajectory.objects.filter(run=run).count() == 1


def test_meta_extra_keeps_unknown_header_fields(tmp_path):
    path = write(tmp_path / "t.jsonl", {"sample_id": 3, "seed": 42}, STEPS[:1])
    [parsed] = read_trajectories(path)
    assert parsed.meta.sample_id == "3" and parsed.meta.extra == {"seed": 42}
    assert json.loads(path.read_text().splitlines()[0])["format"] == "medalboard-trajectory"


def test_boolean_parent_index_is_dropped_with_a_warning(db, tmp_path):
    steps = [{"kind": "plan", "text": "a"}, {"kind": "plan", "text": "b"},
             {"kind": "plan", "text": "c", "parent_index": True}]  # True == 1 would pass a plain int check
    [(run, stored)] = import_all(write(tmp_path / "t.jsonl", {"task": "t"}, steps))
    assert stored[2].parent_index is None
    assert any("parent_index True" in w for w in run.import_warnings)


def test_token_totals_drop_what_is_not_a_count_and_a_total_past_2_63(tmp_path):
    counts = [(5, 2), (7.0, None), (-1, 3), (2**64, "4"), (True, 1), (2**62, 2**62), (2**62, 1), (1, 1)]
    steps = [{"kind": "llm", "data": {"tokens_in": i, "tokens_out": o}} for i, o in counts]
    [parsed] = read_trajectories(write(tmp_path / "t.jsonl", {}, steps))
    list(parsed.steps)
    # By hand: counts are whole numbers in 0..2^63-1 (7.0 is 7, "4" is 4, True is 1); a total over
    # 2^63-1 is dropped (None) at the line that passes it, and later lines count again from 0.
    tokens_in = 5 + 7 + 1 + 2**62
    tokens_in = None if tokens_in + 2**62 > 2**63 - 1 else tokens_in + 2**62  # line 8 passes it
    tokens_in = (tokens_in or 0) + 1
    assert (parsed.meta.tokens_in, parsed.meta.tokens_out) == (tokens_in, 2 + 3 + 4 + 1 + 2**62 + 1 + 1)
    warnings = " | ".join(parsed.warnings)
    assert "line 4: tokens_in = -1 is not a count" in warnings
    assert "line 5: tokens_in = 1.84e+19 is not a count" in warnings
    assert "line 8: the tokens_in total passes 2^63" in warnings
    assert "tokens_out total" not in warnings

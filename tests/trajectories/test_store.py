"""The trajectory store (one file per run, indexed by blocks) against a plain list of the same steps.

Blocks are made tiny here so every query crosses many block boundaries; each answer is compared with
what slicing and filtering the Python list gives.
"""

from __future__ import annotations

import random
import typing
from itertools import islice

import orjson
import pytest
from django.core.files.storage import default_storage
from django.db import transaction

from leaderboard.models import StepBlock, StepKind, Trajectory
from leaderboard.trajectories.importers import jsonl, read_trajectories, save_steps
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.store import StoredTrajectory, write_steps, writing
from tests.trajectories.import_support import make_run

KINDS = ["plan", "code", "command", "observation", "score", "llm", "error"]


def make_steps(n: int, seed: int = 0) -> list[StepData]:
    rng = random.Random(seed)
    steps = []
    for i in range(n):
        kind = rng.choice(KINDS)
        data = {"file": f"f{i % 3}.py", "content": f"x = {i}\n"} if kind == "code" else {"n": i}
        steps.append(StepData(index=i, kind=kind, title=f"{kind} {i}", text=f"Text of step {i} ÉTÉ \"q\" \\ {i % 7}",
                              data=data, t=i * 1.5, score=rng.random() if kind == "score" else None,
                              parent_index=rng.randrange(i) if i and rng.random() < 0.3 else None))
    return steps


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(writing, "BLOCK_STEPS", 7)
    monkeypatch.setattr(writing, "SAVE_BLOCKS", 4)  # rows saved in several batches while writing


@pytest.fixture
def stored(db, small_blocks):
    run = make_run()
    write_steps(run, make_steps(100))
    return StoredTrajectory.of(run), make_steps(100)


def fields(steps) -> list[tuple]:
    return [(s.index, s.kind, s.title, s.text, s.t, s.score, s.parent_index) for s in steps]


def test_blocks_cover_every_step_once(stored):
    store, expected = stored
    assert len(store.blocks) == 15  # ceil(100 / 7)
    assert [b.first for b in store.blocks] == list(range(0, 100, 7))
    assert sum(b.count for b in store.blocks) == store.n_steps == 100
    assert fields(store.steps()) == fields(expected)


@pytest.mark.parametrize("kinds", [None, ["code"], ["score", "error"], ["submission"], []])
@pytest.mark.parametrize("start", [0, 1, 6, 7, 50, 99, 100, 500])
def test_forward_and_backward_iteration(stored, kinds, start):
    store, expected = stored
    keep = [s for s in expected if kinds is None or s.kind in kinds]
    assert fields(store.steps(start, kinds)) == fields([s for s in keep if s.index >= start])
    assert fields(store.steps_before(start, kinds)) == fields([s for s in keep if s.index < start][::-1])
    assert store.count_before(start, kinds) == sum(1 for s in keep if s.index < start)
    assert store.count(kinds) == len(keep)


@pytest.mark.parametrize("kinds", [None, ["code"], ["llm", "plan"]])
@pytest.mark.parametrize("offset, limit", [(0, 10), (5, 3), (6, 1), (7, 7), (95, 10), (200, 5)])
def test_slices(stored, kinds, offset, limit):
    store, expected = stored
    keep = [s for s in expected if kinds is None or s.kind in kinds]
    assert fields(store.slice(offset, limit, kinds)) == fields(keep[offset:offset + limit])


def test_single_steps(stored):
    store, expected = stored
    for i in (0, 6, 7, 50, 99):
        assert fields([store.step(i)]) == fields([expected[i]])
    assert store.step(100) is None and store.step(-1) is None and store.step(None) is None


@pytest.mark.parametrize("query", ["step 5", "STEP 5", "été", "ÉTÉ", '"q"', "\\", "f1.py", "x = 42", "nothing here",
                                   '"n": 3', "n"])
def test_search_matches_a_plain_scan(stored, query):
    store, expected = stored
    needle = query.lower()

    def hit(s: StepData) -> bool:
        return (needle in s.title.lower() or needle in s.text.lower()
                or needle in orjson.dumps(s.data).decode().lower())

    assert fields(store.search(query)) == fields([s for s in expected if hit(s)])
    assert fields(store.search(query, ["code"])) == fields([s for s in expected if hit(s) and s.kind == "code"])


def test_outline_is_the_tree_and_score_points(stored):
    store, expected = stored
    parents = {s.parent_index for s in expected if s.parent_index is not None}
    nodes = [s for s in expected if s.parent_index is not None or s.index in parents]
    assert [(n["index"], n["parent_index"], n["kind"], n["title"]) for n in store.outline["tree"]] == [
        (s.index, s.parent_index, s.kind, s.title) for s in nodes]
    assert store.outline["scores"] == [[s.index, s.t, s.score] for s in expected if s.score is not None]
    code = [s for s in expected if s.kind == "code"]
    assert store.outline["code"]["last"] == code[-1].index


def test_code_steps_get_a_diff_against_their_files_previous_version(stored):
    store, expected = stored
    seen: dict[str, str] = {}
    for step in store.complete(list(store.steps(0, ["code"]))):
        name = step.data["file"]
        if name in seen:
            assert step.data["diff"].splitlines()[-2:] == [f"-{seen[name].strip()}", f"+{step.data['content'].strip()}"]
        else:
            assert step.data["diff"] == ""
        seen[name] = step.data["content"]


def test_writing_again_replaces_the_file_and_rows(db, small_blocks, django_capture_on_commit_callbacks):
    run = make_run()
    first = write_steps(run, make_steps(20)).file
    with django_capture_on_commit_callbacks(execute=True):
        second = write_steps(run, make_steps(30, seed=1)).file
    assert first != second and not default_storage.exists(first) and default_storage.exists(second)
    assert Trajectory.objects.filter(run=run).count() == 1
    assert StepBlock.objects.filter(trajectory__run=run).count() == 5
    assert StoredTrajectory.of(run).n_steps == 30


def test_deleting_the_run_deletes_its_file(db, django_capture_on_commit_callbacks):
    run = make_run()
    name = write_steps(run, make_steps(10)).file
    with django_capture_on_commit_callbacks(execute=True):
        run.delete()
    assert not default_storage.exists(name) and not StepBlock.objects.exists()


def test_a_failure_while_writing_leaves_no_file(db, monkeypatch):
    run = make_run()
    names = []
    real_new_name = writing.new_file_name
    monkeypatch.setattr(writing, "new_file_name",
                        lambda run_id: names.append(real_new_name(run_id)) or names[-1])

    def steps():
        yield from make_steps(5)
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError), transaction.atomic():
        write_steps(run, steps())
    assert names and not default_storage.exists(names[0]) and not Trajectory.objects.exists()


def test_a_write_error_in_the_background_thread_reaches_the_importer():
    class Full:
        def write(self, chunk):
            raise OSError(28, "No space left on device")

        def flush(self):
            pass

    writer = writing.Writer(Full())
    with pytest.raises(OSError, match="No space left"):
        for step in make_steps(2000):
            writer.add(step)
        writer.finish()


def test_valid_jsonl_lines_are_stored_byte_for_byte(db, tmp_path):
    lines = [jsonl.header_line({"task": "t"}),
             b'{"kind": "plan", "title": "as written", "text": "keeps   its spacing", "extra": [1, 2]}\n',
             b'{"kind":"code","data":{"file":"a.py","content":"x = 1\\n"},"index":1}\n',
             b'{"kind": "plan", "text": "caf\\u00e9"}\n',  # an escape: re-serialized, stored as text
             b'{"kind": "plan", "t": true}\n']  # a wrong type: repaired by the general path
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines))
    run = make_run()
    [parsed] = read_trajectories(path)
    save_steps(run, parsed)
    store = StoredTrajectory.of(run)
    stored = list(islice(store.raw_chunks(), 1))[0].split(b"\n")
    assert stored[0] == lines[1].rstrip(b"\n") and stored[1] == lines[2].rstrip(b"\n")
    assert orjson.loads(stored[2]) == {"index": 2, "kind": "plan", "text": "café"}
    assert [s.text for s in store.steps()][2] == "café" and [s.t for s in store.steps()][3] is None


def test_the_fast_path_kinds_are_the_models_kinds():
    literal = typing.get_type_hints(jsonl._StoredLine)["kind"]
    assert set(typing.get_args(literal)) == set(StepKind.values)


def test_a_run_whose_file_is_lost_says_so_instead_of_failing(client, db):
    run = make_run()
    name = write_steps(run, make_steps(10)).file
    default_storage.delete(name)
    page = client.get(f"/runs/{run.pk}/")
    assert page.status_code == 200 and b'id="missing-trajectory"' in page.content and name.encode() in page.content
    api = client.get(f"/api/runs/{run.pk}/steps/")
    assert api.status_code == 200 and api.json()["count"] == 0


def test_lines_longer_than_a_read_chunk_and_a_missing_final_newline(db, tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "CHUNK_BYTES", 64)
    long_text = "x" * 5000 + "é" * 100
    body = [jsonl.step_line({"kind": "plan", "text": f"short {i}"}) for i in range(5)]
    body.insert(2, jsonl.step_line({"kind": "observation", "text": long_text}))
    path = tmp_path / "t.jsonl"
    path.write_bytes(jsonl.header_line({"task": "t"}) + b"".join(body).rstrip(b"\n"))
    run = make_run()
    [parsed] = read_trajectories(path)
    assert save_steps(run, parsed) == 6 and parsed.warnings == []
    steps = list(StoredTrajectory.of(run).steps())
    assert [s.text for s in steps] == ["short 0", "short 1", long_text, "short 2", "short 3", "short 4"]


def test_requests_read_only_the_block_rows_they_need(db, small_blocks):
    from leaderboard.web.replay import window

    run = make_run()
    steps = make_steps(2000, seed=1)
    for s in steps[1000:1990]:  # no errors in the middle: a filter by kind must skip those blocks in SQL
        s.kind = "plan" if s.kind == "error" else s.kind
    write_steps(run, steps)
    n_blocks = StepBlock.objects.filter(trajectory__run=run).count()
    assert n_blocks == 286

    def fresh():
        return StoredTrajectory.of(run)

    store = fresh()
    shown = window(store, around=1999)
    assert shown.cards[-1].step.index == 1999 and store.index.rows_fetched <= 8
    store = fresh()
    codes = [s.index for s in steps if s.kind == "code"]
    assert store.count_before(1500, ["code"]) == sum(1 for i in codes if i < 1500)
    assert store.index.rows_fetched == 1
    store = fresh()
    assert [s.index for s in store.slice(250, 3, ["code"])] == codes[250:253]
    assert store.index.rows_fetched <= 2 * 9 + 2  # a binary search over the blocks
    store = fresh()
    errors = [s.index for s in steps if s.kind == "error"]
    assert [s.index for s in store.steps(0, ["error"])] == errors
    assert store.index.rows_fetched == len({StoredTrajectory.of(run).index.at(i).first for i in errors})


def test_a_block_closes_at_the_step_that_takes_it_to_block_bytes(db, monkeypatch):
    monkeypatch.setattr(writing, "BLOCK_STEPS", 9)
    monkeypatch.setattr(writing, "BLOCK_BYTES", 600)
    steps = make_steps(200, seed=3)
    for s in steps[::13]:
        s.text *= 20  # a step over BLOCK_BYTES on its own here and there
    run = make_run()
    write_steps(run, steps)
    expected, count, size = [], 0, 0  # (first, count) of each block, one step at a time
    for i, step in enumerate(steps):
        count, size = count + 1, size + len(jsonl.step_json(step))
        if count == 9 or size >= 600:
            expected.append((i + 1 - count, count))
            count, size = 0, 0
    if count:
        expected.append((len(steps) - count, count))
    store = StoredTrajectory.of(run)
    assert [(b.first, b.count) for b in store.blocks] == expected
    assert len({c for _, c in expected}) > 3  # blocks of many lengths: both limits were met
    assert fields(store.steps()) == fields(steps)

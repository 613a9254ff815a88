"""Trajectory search: the index built at import names the blocks to read, answers equal a plain scan,
and the API pages hits by cursor (no count of every hit) reading the file once.

Blocks are tiny here so hits and needles sit in many blocks and near their boundaries.
"""

from __future__ import annotations

import io

import numpy as np
import orjson
import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from leaderboard.api import steps as steps_api
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.store import StoredTrajectory, reading, search_index, write_steps
from tests.trajectories.import_support import make_run
from tests.trajectories.test_store import fields, small_blocks  # noqa: F401 - a fixture

ODD = ["Kelvin \u212a", "D\u0130YARBAKIR", "ÉTÉ à Paris", 'say "hi" \\ there', "line one\nline two\ttab"]


def make_steps(n: int) -> list[StepData]:
    steps = []
    for i in range(n):
        data = {"file": f"f{i % 3}.py", "content": f"x = {i}\n"} if i % 5 == 0 else {"n": i, "tag": f"tag-{i % 11}"}
        odd = ODD[i % len(ODD)] if i >= 290 else "Plain"  # odd characters in the last two blocks only
        rare = "zanzibar quokka" if i == 137 else ""
        steps.append(StepData(index=i, kind="code" if i % 5 == 0 else "plan", title=f"step {i}",
                              text=f"{odd} common words {i} {rare}", data=data, t=float(i)))
    return steps


@pytest.fixture
def stored(db, small_blocks):  # noqa: F811 - the fixture imported above
    run = make_run()
    write_steps(run, make_steps(300))
    return StoredTrajectory.of(run)


def plain_scan(query: str, kinds=None) -> list[StepData]:
    """Title and text as strings, data as its JSON text (so the needle is escaped as JSON for it)."""
    needle = query.lower()
    as_json = orjson.dumps(needle)[1:-1].decode()
    return [s for s in make_steps(300) if (kinds is None or s.kind in kinds) and (
        needle in s.title.lower() or needle in s.text.lower() or as_json in orjson.dumps(s.data).decode().lower())]


@pytest.mark.parametrize("query", [
    "zanzibar quokka", "ZANZIBAR", "common words 1", "words 29 ", "kelvin k", "diyarbakir", "i\u0307yarbakir",
    "été à paris", "ÉTÉ À", '"hi" \\ th', "one\nline two", "two\ttab", "tag-10", '"tag": "tag-3"', "x = 15\n",
    "step 29", "nothing matches this", "k", "\u212a", "s", "é"])
def test_search_equals_a_plain_scan(stored, query):
    assert fields(stored.search(query)) == fields(plain_scan(query))
    assert fields(stored.search(query, ["code"])) == fields(plain_scan(query, ["code"]))


def test_the_index_is_built_at_import_and_goes_with_the_trajectory(db, django_capture_on_commit_callbacks):
    run = make_run()
    trajectory = write_steps(run, make_steps(50))
    name = search_index.index_name(trajectory.file)
    assert default_storage.exists(name)
    with django_capture_on_commit_callbacks(execute=True):
        run.delete()
    assert not default_storage.exists(name) and not default_storage.exists(trajectory.file)


def test_a_rare_term_reads_only_the_blocks_the_index_names(stored):
    search = stored.search("zanzibar quokka")
    assert [s.index for s in search] == [137]
    assert search.used_index
    # The block holding it, and the two that hold characters lower-casing into ASCII (always read).
    assert stored.bytes_read == sum(stored.index.at(i).length for i in (137, 290, 299))  # of 43 blocks
    assert stored.index.rows_fetched <= 4


def test_a_needle_too_short_for_the_index_scans_and_stops_at_the_budget(stored):
    search = stored.search("s", budget=1)
    hits = list(search)
    assert not search.used_index and search.stopped
    assert hits == [] or hits[-1].index < search.resume_at
    assert 0 < search.resume_at < 300


def test_a_trajectory_without_an_index_is_still_searched(stored):
    search_index.delete(default_storage, stored.file)
    search = stored.search("zanzibar quokka")
    assert [s.index for s in search] == [137] and not search.used_index


def api(client, run, **params):
    response = client.get(reverse("run-steps", args=[run.pk]), params)
    assert response.status_code == 200, response.content
    return response.json()


def follow(client, run, **params) -> tuple[list[int], int]:
    """Every hit, by following next_cursor; and how many requests that took."""
    hits, requests, cursor = [], 0, None
    while True:
        body = api(client, run, **params, **({} if cursor is None else {"cursor": cursor}))
        requests += 1
        assert body["count"] is None and body["num_pages"] is None
        hits += [s["index"] for s in body["results"]]
        if not body["more"]:
            assert body["next_cursor"] is None
            return hits, requests
        cursor = body["next_cursor"]


@pytest.mark.parametrize("query, kinds", [("common words", None), ("common words", "code"), ("tag-1", None),
                                           ("s", None), ("zanzibar quokka", None), ("nothing matches this", None)])
def test_the_api_pages_hits_by_cursor(client, db, small_blocks, query, kinds):  # noqa: F811
    run = make_run()
    write_steps(run, make_steps(300))
    expected = [s.index for s in plain_scan(query, kinds and [kinds])]
    params = {"q": query, "page_size": 7, **({"type": kinds} if kinds else {})}
    hits, requests = follow(client, run, **params)
    assert hits == expected
    assert requests == max(1, -(-len(expected) // 7))
    first = api(client, run, **params)
    assert [s["index"] for s in first["results"]] == expected[:7]
    assert first["more"] == (len(expected) > 7)
    if len(expected) > 7:
        assert first["next_cursor"] == expected[7]  # exactly where the next page starts


def test_a_search_stopped_by_its_budget_hands_out_a_cursor_and_loses_no_hit(client, db, small_blocks, monkeypatch):  # noqa: F811
    run = make_run()
    write_steps(run, make_steps(300))
    monkeypatch.setattr(steps_api, "SEARCH_BUDGET", 3000)  # a few tiny blocks per request
    hits, requests = follow(client, run, q="step 1", page_size=50)
    assert hits == [s.index for s in plain_scan("step 1")]
    assert requests > 3  # the pages stopped at the budget, not at 50 hits


def test_search_with_around_reads_the_file_once(client, db, small_blocks, monkeypatch):  # noqa: F811
    run = make_run()
    trajectory = write_steps(run, make_steps(300))
    size = default_storage.size(trajectory.file)
    read = []
    original = reading.read_block

    def counting(storage, name, block, f=None):
        raw = original(storage, name, block, f)
        read.append(len(raw))
        return raw

    monkeypatch.setattr(reading, "read_block", counting)
    body = api(client, run, q="common words", type="plan", around=150, page_size=1000)  # (no code diffs to read)
    assert [s["index"] for s in body["results"]] == [i for i in range(150, 300) if i % 5]
    assert sum(read) <= size - trajectory.blocks.get(first=0).length  # at most once, and not before step 150


def test_paging_a_search_by_page_number_or_a_cursor_without_search_is_refused(client, db):
    run = make_run()
    write_steps(run, make_steps(10))
    url = reverse("run-steps", args=[run.pk])
    response = client.get(url, {"q": "step", "page": 2})
    assert response.status_code == 400 and "cursor" in response.json()["page"][0]
    assert client.get(url, {"cursor": 3}).status_code == 400


def test_the_command_indexes_trajectories_written_without_one(stored):
    from django.core.management import call_command

    search_index.delete(default_storage, stored.file)
    out = io.StringIO()
    call_command("index_trajectories", stdout=out)
    assert "Built 1 search index" in out.getvalue()
    search = stored.search("zanzibar quokka")
    assert [s.index for s in search] == [137] and search.used_index
    assert stored.bytes_read == sum(stored.index.at(i).length for i in (137, 290, 299))


@pytest.mark.parametrize("n_blocks", [0, 1, 8, 19])
def test_the_index_rows_are_each_blocks_aligned_gram_hashes(n_blocks):
    """The saved bits against a plain computation: block k's bit is set in row h exactly when one of its
    4-byte words at an offset divisible by 4 hashes (low 5 bits of each byte, Fibonacci) to h."""
    import random

    rng = random.Random(n_blocks)
    alphabet = b"abcXYZ \"{}:,\n\xc3\xa9"
    blocks = [bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 3000))) for _ in range(n_blocks)]
    builder = search_index.Builder()
    for k, raw in enumerate(blocks):
        builder.add(10 * k, raw)
    index = search_index.Index(np.frombuffer(builder.content(), dtype=np.uint8))
    bits = search_index.hash_bits_for(n_blocks)
    expected = np.zeros((1 << bits, (n_blocks + 7) // 8), dtype=np.uint8)
    for k, raw in enumerate(blocks):
        for at in range(0, len(raw) - 3, 4):
            word = int.from_bytes(raw[at:at + 4], "little") & 0x1F1F1F1F
            expected[(word * 0x9E3779B1 % 2**32) >> (32 - bits), k // 8] |= 1 << (k % 8)
    assert index.n_blocks == n_blocks and index.firsts.tolist() == [10 * k for k in range(n_blocks)]
    assert np.array_equal(index.rows, expected)

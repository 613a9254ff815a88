"""GET /api/runs/<pk>/steps/: paging, kind filter, server-side search, `around`, visibility; outline."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.web.test_replay_page import KIND_SPECS, add_messages, add_steps, make_run


@pytest.fixture
def run(db):
    return make_run()


def steps(client, run, **params):
    return client.get(reverse("run-steps", args=[run.pk]), params)


def test_returns_the_event_model(client, run):
    add_steps(run, [{"kind": "code", "parent_index": None, "title": "t", "text": "x",
                     "data": {"file": "a.py", "content": "1"}, "score": 0.5}])
    body = steps(client, run).json()
    assert body["count"] == 1 and body["page"] == 0 and body["num_pages"] == 1
    assert body["results"] == [{"index": 0, "parent_index": None, "kind": "code", "t": 0.0, "title": "t",
                                "text": "x", "data": {"file": "a.py", "content": "1", "diff": ""}, "score": 0.5}]


def test_pages(client, run):
    add_messages(run, 25)
    body = steps(client, run, page=2, page_size=10).json()
    assert [s["index"] for s in body["results"]] == list(range(20, 25))
    assert body["count"] == 25 and body["num_pages"] == 3


def test_around_returns_the_page_holding_a_step(client, run):
    add_messages(run, 1000)
    body = steps(client, run, around=777, page_size=200).json()
    assert body["page"] == 3 and 777 in [s["index"] for s in body["results"]]


def test_filters_by_kind(client, run):
    add_steps(run, KIND_SPECS * 2)
    body = steps(client, run, type="score,command").json()
    assert {s["kind"] for s in body["results"]} == {"score", "command"} and body["count"] == 4
    assert steps(client, run, type="nonsense").json()["count"] == 0


def test_search_covers_title_text_and_data(client, run):
    add_steps(run, [{"title": "Needle in title"}, {"text": "a NEEDLE in text"}, {"kind": "command",
                    "data": {"command": "ls", "stdout": "needle.csv"}}, {"text": "hay"}])
    body = steps(client, run, q="needle").json()
    assert [s["index"] for s in body["results"]] == [0, 1, 2]


def test_search_and_filter_combine(client, run):
    add_steps(run, [{"kind": "plan", "text": "xgboost"}, {"kind": "message", "text": "xgboost"}])
    assert [s["index"] for s in steps(client, run, q="xgboost", type="plan").json()["results"]] == [0]


def test_bad_parameters_are_400(client, run):
    assert steps(client, run, page_size=5000).status_code == 400
    assert steps(client, run, page=-1).status_code == 400


@pytest.mark.parametrize(("persona", "status"), [("alice", 200), ("staff", 200), ("bob", 404), (None, 404)])
def test_private_runs_are_404_for_others(client, alice, bob, staff, persona, status):
    run = make_run(owner=alice, is_private=True)
    if persona:
        client.force_login({"alice": alice, "bob": bob, "staff": staff}[persona])
    assert steps(client, run).status_code == status
    assert client.get(reverse("run-outline", args=[run.pk])).status_code == status


def test_outline_has_tree_nodes_and_score_points(client, run):
    add_steps(run, [
        {"kind": "code", "title": "draft", "score": 0.5, "data": {"node_id": "a"}},
        {"kind": "message", "text": "not a node"},
        {"kind": "code", "parent_index": 0, "data": {"buggy": True}},
        {"kind": "code", "parent_index": 0, "score": 0.7, "data": {"is_best": True}},
    ])
    body = client.get(reverse("run-outline", args=[run.pk])).json()
    assert [n["index"] for n in body["tree"]] == [0, 2, 3]
    assert [(n["buggy"], n["is_best"]) for n in body["tree"]] == [(False, False), (True, False), (False, True)]
    assert body["scores"] == [{"index": 0, "t": 0.0, "score": 0.5}, {"index": 3, "t": 3.0, "score": 0.7}]
    assert body["truncated"] is False


def test_is_in_the_openapi_schema(client, db):
    schema = client.get(reverse("schema"), {"format": "json"}).json()
    assert "/api/runs/{id}/steps/" in schema["paths"] and "/api/runs/{id}/outline/" in schema["paths"]

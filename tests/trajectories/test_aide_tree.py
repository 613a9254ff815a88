"""The AIDE solution tree on every AIDE journal in ../shared/data/trajectories: every journal node is
a tree node with its metric, its buggy flag and its parent, in /api/runs/<id>/outline/."""

from __future__ import annotations

import json

import pytest

from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all

JOURNALS = sorted((TRAJECTORIES_DIR / "aide").glob("*journal*.json"))


def test_there_is_a_journal_to_check():
    assert JOURNALS


@pytest.mark.parametrize("journal", JOURNALS, ids=lambda p: p.name)
def test_every_journal_node_is_a_tree_node_with_metric_buggy_and_parent(client, db, journal):
    data = json.loads(journal.read_text())
    nodes = {n["id"]: n for n in data["nodes"]}
    parents = data.get("node2parent") or {n["id"]: n["parent"] for n in data["nodes"] if n.get("parent")}
    [(run, steps)] = import_all(journal)
    tree = client.get(f"/api/runs/{run.pk}/outline/").json()["tree"]
    by_index = {n["index"]: n for n in tree}
    node_of = {s.index: s.data["node_id"] for s in steps if s.data.get("tree_node")}
    assert len(tree) == len(nodes) and set(node_of.values()) == set(nodes)
    for entry in tree:
        journal_node = nodes[node_of[entry["index"]]]
        assert entry["score"] == journal_node["metric"]["value"]
        assert entry["buggy"] is journal_node["is_buggy"]
        assert entry["maximize"] == journal_node["metric"]["maximize"]
        parent = entry["parent_index"]
        assert (node_of[parent] if parent is not None else None) == parents.get(journal_node["id"])
        assert parent is None or parent in by_index


def test_a_draft_without_children_is_in_the_tree(client, db, tmp_path):
    journal = json.loads(JOURNALS[0].read_text())
    lonely = [n for n in journal["nodes"] if n["id"] not in journal["node2parent"]
              and n["id"] not in set(journal["node2parent"].values())]
    assert lonely, "the shared journal has a childless draft (node 1)"
    [(run, _)] = import_all(JOURNALS[0])
    titles = [n["title"] for n in client.get(f"/api/runs/{run.pk}/outline/").json()["tree"]]
    assert any(t.startswith(f"Node {lonely[0]['step']} (draft") for t in titles)

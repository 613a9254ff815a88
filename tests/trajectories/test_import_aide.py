import json

from leaderboard.trajectories.importers import detect
from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all

JOURNAL = TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json"


def load_journal():
    journal = json.loads(JOURNAL.read_text())
    return {n["id"]: n for n in journal["nodes"]}, journal["node2parent"]


def expected_best(nodes):
    good = [n for n in nodes.values() if not n["is_buggy"] and n["metric"]["value"] is not None]
    maximize = good[0]["metric"]["maximize"]
    return (max if maximize else min)(good, key=lambda n: n["metric"]["value"])["id"]


def test_detects_aide_journal():
    assert detect(JOURNAL) == "aide"


def test_every_node_gives_plan_code_command_score(db):
    nodes, _ = load_journal()
    [(run, steps)] = import_all(JOURNAL)
    assert len(nodes) == 20
    assert run.n_steps == len(steps) == 4 * len(nodes)
    assert run.trajectory_format == "aide"
    for i in range(0, len(steps), 4):
        assert [s.kind for s in steps[i:i + 4]] == ["plan", "code", "command", "score"]
        assert len({s.data["node_id"] for s in steps[i:i + 4]}) == 1


def test_tree_comes_from_node2parent(db):
    nodes, node2parent = load_journal()
    [(_, steps)] = import_all(JOURNAL)
    first_step = {s.data["node_id"]: s for s in steps if s.kind == "plan"}
    linked = [s for s in steps if s.parent_index is not None]
    assert len(node2parent) == 15
    assert len(linked) == len(node2parent)
    for child, parent in node2parent.items():
        assert first_step[child].parent_index == first_step[parent].index
    roots = [s for s in first_step.values() if s.parent_index is None]
    assert len(roots) == len(nodes) - len(node2parent)


def test_stage_buggy_and_best_node(db):
    nodes, node2parent = load_journal()
    [(run, steps)] = import_all(JOURNAL)
    plans = {s.data["node_id"]: s for s in steps if s.kind == "plan"}
    assert sum(n["is_buggy"] for n in nodes.values()) == 8
    assert sum(s.data["buggy"] for s in plans.values()) == 8
    for node_id, step in plans.items():
        parent = node2parent.get(node_id)
        stage = "draft" if parent is None else "debug" if nodes[parent]["is_buggy"] else "improve"
        assert step.data["stage"] == stage
    best = expected_best(nodes)
    assert [node_id for node_id, s in plans.items() if s.data["is_best"]] == [best]
    best_score = next(s for s in steps if s.kind == "score" and s.data["node_id"] == best)
    assert best_score.score == nodes[best]["metric"]["value"]


def test_code_diff_against_parent_and_command_output(db):
    nodes, node2parent = load_journal()
    [(run, steps)] = import_all(JOURNAL)
    for code in (s for s in steps if s.kind == "code"):
        node = nodes[code.data["node_id"]]
        assert code.data["content"] == node["code"]
        if code.data["node_id"] in node2parent:
            assert code.data["diff"].startswith("--- a/")
        else:
            assert code.data["diff"] == ""
    command = next(s for s in steps if s.kind == "command")
    assert command.text == "".join(nodes[command.data["node_id"]]["_term_out"])
    assert run.duration_s > 0 and run.started_at is not None

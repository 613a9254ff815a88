"""A job's AIDE run links each LLM call the gateway recorded to the node it wrote or reviewed, from the
text alone (leaderboard.trajectories.call_links): the plan and code of a node are in the reply that
wrote them, its analysis is the summary of the review that judged it. Calls scripted as
tests/aide_upstream.py answers them, whose replies differ in a digit or two; a call the text does not
tie to a node stays unlinked, and a file cannot claim links of its own."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from leaderboard.runs.job_runs import save_final_trajectory
from tests.aide_upstream import ACCURACIES, PLAN, REVIEW_TOOL, SOLUTION, reply, review
from tests.runner.test_job_run_figures import REAL, _job_run, _jsonl, _steps

pytestmark = pytest.mark.django_db


def _code(k: int) -> str:
    return SOLUTION.format(flipped=k, accuracy=ACCURACIES[k])


def _node(k: int, ctime: float, *, code: str | None = None, analysis: str | None = None) -> dict:
    """The node AIDE makes of the k-th reply: its plan, its code (as black left it) and the review's summary."""
    summary = analysis or review(f"Validation accuracy: {ACCURACIES[k]:.4f}")["summary"]
    return {
        "id": f"n{k}",
        "step": k,
        "ctime": ctime,
        "plan": PLAN.format(flipped=k),
        "code": code or _code(k),
        "_term_out": [f"Validation accuracy: {ACCURACIES[k]:.4f}"],
        "exec_time": 1.0,
        "exc_type": None,
        "analysis": summary,
        "metric": {"value": ACCURACIES[k], "maximize": True},
        "is_buggy": False,
    }


def _call(t: float, text: str, **data) -> dict:
    return {"kind": "llm", "t": t, "title": "call", "data": {**REAL, "reply": text, **data}}


def _review(t: float, node: dict) -> dict:
    arguments = {
        "is_bug": False,
        "summary": node["analysis"],
        "metric": node["metric"]["value"],
        "lower_is_better": False,
    }
    return _call(t, f"[tool call {REVIEW_TOOL}] {json.dumps(arguments)}")


def _saved(tmp_path, nodes: list[dict], calls: list[dict], journal_name: str = "journal.json"):
    started = timezone.now() - timedelta(seconds=120)
    run = _job_run(started)
    for node in nodes:
        node["ctime"] += started.timestamp()
    journal = tmp_path / journal_name
    journal.write_text(json.dumps({"nodes": nodes, "node2parent": {}}))
    gateway = _jsonl(tmp_path / "llm-steps.jsonl", {}, calls)
    save_final_trajectory(run, ((journal, journal_name),), (gateway, "llm-steps.jsonl"), agent_started_at=started)
    return run, _steps(run)


def _links(steps) -> dict[int, dict]:
    keys = ("produced_step", "for_step", "llm_steps")
    return {s.index: {k: s.data[k] for k in keys if k in s.data} for s in steps if any(k in s.data for k in keys)}


def test_each_call_links_to_the_node_it_wrote_and_the_node_it_reviewed(tmp_path):
    # reply(1) and reply(2) differ in two digits; the node is written 2 s after its call, reviewed after it ran
    nodes = [_node(1, 10.0), _node(2, 20.0)]
    calls = [
        _call(8.0, reply(1)),
        _review(12.0, nodes[0]),
        _call(18.0, reply(2)),
        _review(22.0, nodes[1]),
        _call(30.0, "A final report of the best solution."),
    ]
    run, steps = _saved(tmp_path, nodes, calls)
    at = {(s.kind, s.t): s.index for s in steps}
    first = {node["id"]: next(s.index for s in steps if s.data.get("node_id") == node["id"]) for node in nodes}
    assert _links(steps) == {
        at["llm", 8.0]: {"produced_step": first["n1"]},
        at["llm", 12.0]: {"for_step": first["n1"]},
        first["n1"]: {"llm_steps": [at["llm", 8.0], at["llm", 12.0]]},
        at["llm", 18.0]: {"produced_step": first["n2"]},
        at["llm", 22.0]: {"for_step": first["n2"]},
        first["n2"]: {"llm_steps": [at["llm", 18.0], at["llm", 22.0]]},
    }


def test_a_similar_reply_nearer_in_time_is_not_taken_for_the_nodes(tmp_path):
    """Time order alone would give node 1 the call just before it, whose reply is node 12's (AIDE
    re-asks when a reply has no code; here a reply of the same shape wrote no node). The code as black
    reformats it (double quotes, its own line breaks) still matches the reply that wrote it."""
    code = _code(1).replace(
        'sample.loc[sample.index < 1, "Transported"] = not majority',
        'sample.loc[\n    sample.index < 1, "Transported",\n] = not majority',
    )
    nodes = [_node(1, 10.0, code=code)]
    calls = [_call(6.0, reply(1).replace('"', "'")), _call(8.0, reply(12))]
    run, steps = _saved(tmp_path, nodes, calls)
    at = {(s.kind, s.t): s.index for s in steps}
    node = next(s.index for s in steps if s.data.get("tree_node"))
    assert _links(steps) == {at["llm", 6.0]: {"produced_step": node}, node: {"llm_steps": [at["llm", 6.0]]}}


def test_two_reviews_with_one_summary_go_to_their_own_nodes(tmp_path):
    bug = "The script printed no validation accuracy."
    nodes = [_node(1, 10.0, analysis=bug), _node(2, 20.0, analysis=bug)]
    calls = [_call(8.0, reply(1)), _review(12.0, nodes[0]), _call(18.0, reply(2)), _review(22.0, nodes[1])]
    run, steps = _saved(tmp_path, nodes, calls)
    at = {(s.kind, s.t): s.index for s in steps}
    first = [s.index for s in steps if s.data.get("tree_node")]
    assert [_links(steps)[at["llm", t]] for t in (12.0, 22.0)] == [{"for_step": first[0]}, {"for_step": first[1]}]


def test_no_link_is_guessed_where_the_text_does_not_tie_them(tmp_path):
    """A reply the gateway kept cut, a node whose code no reply holds, a review of a summary no node
    has: all unlinked, though each call sits just before a node."""
    nodes = [_node(1, 10.0), _node(2, 20.0, code="print('written by hand')\n"), _node(3, 30.0)]
    calls = [
        _call(8.0, reply(1), reply_truncated=True),
        _call(18.0, reply(2)),
        _call(28.0, reply(3)),
        _call(32.0, f"[tool call {REVIEW_TOOL}] " + json.dumps({"summary": "something else", "is_bug": True})),
    ]
    run, steps = _saved(tmp_path, nodes, calls)
    third = next(s.index for s in steps if s.data.get("node_id") == "n3")
    linked = _links(steps)
    assert linked == {third: {"llm_steps": [third - 1]}, third - 1: {"produced_step": third}}


def test_a_format_without_nodes_gets_no_links_and_a_file_cannot_claim_them(tmp_path):
    started = timezone.now() - timedelta(seconds=60)
    run = _job_run(started)
    agent = _jsonl(
        tmp_path / "trajectory.jsonl",
        {},
        [
            {"kind": "plan", "t": 5.0, "text": PLAN.format(flipped=1), "data": {"llm_steps": [0]}},
            {"kind": "code", "t": 5.0, "data": {"file": "a.py", "content": _code(1)}},
        ],
    )
    gateway = _jsonl(tmp_path / "llm-steps.jsonl", {}, [_call(4.0, reply(1))])
    save_final_trajectory(run, ((agent, "trajectory.jsonl"),), (gateway, "llm-steps.jsonl"), agent_started_at=started)
    assert _links(_steps(run)) == {}
    run.refresh_from_db()
    assert any("data.llm_steps is set by the site only" in w for w in run.import_warnings)


def test_the_replay_and_the_api_show_the_links(tmp_path, client):
    nodes = [_node(1, 10.0)]
    run, steps = _saved(tmp_path, nodes, [_call(8.0, reply(1)), _review(12.0, nodes[0])])
    call, node, reviewed = 0, 1, next(s.index for s in steps if s.kind == "llm" and s.t == 12.0)
    page = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert f'href="/runs/{run.pk}/#step-{node}">wrote node #{node}</a>' in page
    assert f'href="/runs/{run.pk}/#step-{node}">reviewed node #{node}</a>' in page
    assert f'href="/runs/{run.pk}/#step-{call}">LLM call #{call}</a>' in page
    assert f'href="/runs/{run.pk}/#step-{reviewed}">LLM call #{reviewed}</a>' in page
    api = client.get(f"/api/runs/{run.pk}/steps/").json()["results"]
    assert api[call]["data"]["produced_step"] == node and api[node]["data"]["llm_steps"] == [call, reviewed]

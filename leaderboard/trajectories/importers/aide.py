"""AIDE journal.json: a solution tree; each node becomes plan, code, command and score steps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import ijson

from leaderboard.trajectories.importers.base import (
    Importer,
    ParsedTrajectory,
    StepCounter,
    StepData,
    TrajectoryError,
    TrajectoryMeta,
    as_text,
    parse_time,
    register,
    to_float,
    unified_diff,
)
from leaderboard.trajectories.importers.numbers import open_json

CODE_FILE = "runfile.py"  # the file AIDE writes each node's code to


@register
class AideImporter(Importer):
    name = "aide"

    def sniff(self, path, head, shape) -> bool:
        if shape is None or shape.top != "object":
            return False
        return "node2parent" in shape.keys or shape.has("nodes.item.plan", "nodes.item.code")

    def read(self, path: Path) -> Iterator[ParsedTrajectory]:
        parsed = ParsedTrajectory(format=self.name, meta=TrajectoryMeta(agent="AIDE"), steps=iter(()))
        nodes, node2parent = _load(path, parsed)
        if not nodes:
            raise TrajectoryError(f"{path.name}: no readable AIDE nodes")
        parsed.steps = _steps(nodes, node2parent, parsed)
        yield parsed


def _load(path: Path, parsed: ParsedTrajectory) -> tuple[list[dict], dict[str, str]]:
    """Nodes and parent links; a journal is as long as the agent's step budget, so it fits in memory."""
    nodes: list[dict] = []
    node2parent: dict[str, str] = {}
    try:
        with open_json(path) as f:
            for key, value in ijson.kvitems(f, "", use_float=True):
                if key == "nodes" and isinstance(value, list):
                    nodes = [n for n in value if isinstance(n, dict)]
                elif key == "node2parent" and isinstance(value, dict):
                    node2parent = value
    except (ijson.JSONError, ValueError, UnicodeDecodeError) as exc:
        parsed.warn(f"journal is truncated or malformed ({exc}); reading the nodes that are complete")
        if not nodes:
            nodes = _complete_nodes(path)
    if nodes and not node2parent:
        node2parent = {n["id"]: n["parent"] for n in nodes if isinstance(n.get("parent"), str)}
        if not node2parent:
            parsed.warn("journal has no node2parent: every node is shown as a draft")
    return nodes, node2parent


def _complete_nodes(path: Path) -> list[dict]:
    nodes = []
    try:
        with open_json(path) as f:
            for node in ijson.items(f, "nodes.item", use_float=True):
                nodes.append(node)
    except (ijson.JSONError, ValueError, UnicodeDecodeError):
        pass
    return [n for n in nodes if isinstance(n, dict)]


def best_node_id(nodes: list[dict]) -> str | None:
    """Best metric.value among non-buggy nodes, in the direction the metric says."""
    best, best_value = None, None
    for node in nodes:
        metric = node.get("metric") or {}
        value = to_float(metric.get("value"))
        if node.get("is_buggy") or value is None:
            continue
        maximize = bool(metric.get("maximize"))
        if best_value is None or (value > best_value if maximize else value < best_value):
            best, best_value = node.get("id"), value
    return best


def _steps(nodes: list[dict], node2parent: dict[str, str], parsed: ParsedTrajectory) -> Iterator[StepData]:
    nodes = sorted(nodes, key=lambda n: (to_float(n.get("step")) or 0, to_float(n.get("ctime")) or 0))
    by_id = {n.get("id"): n for n in nodes}
    best = best_node_id(nodes)
    start = min((to_float(n.get("ctime")) for n in nodes if to_float(n.get("ctime")) is not None), default=None)
    _fill_meta(parsed.meta, nodes, start, by_id.get(best))
    first_step: dict[str, int] = {}
    make = StepCounter()
    for node in nodes:
        node_id = node.get("id")
        parent_id = node2parent.get(node_id)
        if parent_id is not None and parent_id not in first_step:
            parsed.warn(f"node {node_id}: parent {parent_id} is not an earlier node; shown as a root")
            parent_id = None
        parent = by_id.get(parent_id)
        metric = node.get("metric") or {}
        common = {
            "node_id": node_id,
            "step": node.get("step"),
            "stage": "draft" if parent is None else "debug" if parent.get("is_buggy") else "improve",
            "buggy": bool(node.get("is_buggy")),
            "is_best": node_id == best,
            # the node's own metric, so the solution tree can colour every node (its score step has it too)
            "node_score": to_float(metric.get("value")),
            "maximize": metric.get("maximize") if isinstance(metric.get("maximize"), bool) else None,
        }
        t = None if start is None or to_float(node.get("ctime")) is None else to_float(node["ctime"]) - start
        for i, step in enumerate(_node_steps(make, node, parent, common, t)):
            if i == 0:  # the node's first step stands for it in the tree, draft or not
                first_step[node_id] = step.index
                step.parent_index = first_step.get(parent_id)
                step.data["tree_node"] = True
            yield step


def _node_steps(make: StepCounter, node: dict, parent: dict | None, common: dict, t: float | None):
    code, parent_code = as_text(node.get("code")), as_text((parent or {}).get("code"))
    title = f"Node {node.get('step')} ({common['stage']}{', buggy' if common['buggy'] else ''})"
    yield make("plan", title=title, text=as_text(node.get("plan")), data=dict(common), t=t)
    diff = unified_diff(parent_code, code, CODE_FILE) if parent is not None else ""
    code_data = {**common, "file": CODE_FILE, "content": code, "diff": diff}
    yield make("code", title=f"{CODE_FILE} (node {node.get('step')})", data=code_data, t=t)
    exec_time = to_float(node.get("exec_time"))
    command = {
        **common, "command": f"python {CODE_FILE}", "stdout": as_text(node.get("_term_out")), "stderr": "",
        "exit_code": 1 if node.get("exc_type") else 0, "duration": exec_time,
        "exc_type": node.get("exc_type"), "exc_info": node.get("exc_info"),
    }
    yield make("command", title=f"python {CODE_FILE}", text=command["stdout"], data=command, t=t)
    metric = node.get("metric") or {}
    value = to_float(metric.get("value"))
    score = {**common, "metric": "validation", "value": value, "maximize": metric.get("maximize")}
    label = "buggy" if common["buggy"] else value
    yield make("score", title=f"Score: {label}", text=as_text(node.get("analysis")), data=score, score=value,
               t=None if t is None else t + (exec_time or 0))


def _fill_meta(meta: TrajectoryMeta, nodes: list[dict], start: float | None, best: dict | None) -> None:
    meta.started_at = parse_time(start)
    ends = [to_float(n.get("ctime")) + (to_float(n.get("exec_time")) or 0) for n in nodes
            if to_float(n.get("ctime")) is not None]
    if start is not None and ends:
        meta.duration_s = max(ends) - start
    if best is not None:
        meta.final_score = to_float((best.get("metric") or {}).get("value"))
        meta.extra["best_node_id"] = best.get("id")

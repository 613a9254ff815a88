"""Which LLM call produced which step, where the agent's format says so.

A job's trajectory joins the agent's steps with the gateway's record of its LLM calls on one clock
(leaderboard.runs.job_runs). AIDE's journal lets a call be tied to its node from the text alone: a
node's plan and code are cut from the reply of the call that wrote them (`extract_text_up_to_code`,
`extract_code`, the code put through black), and its analysis is the `summary` argument of the
`submit_review` function call that reviewed it. A call is linked only on that evidence, never on
time alone: a call whose reply holds no node's plan and code (a retry, the final report, a reply the
gateway kept cut) stays unlinked, and so does a node none of the kept calls wrote.

The links are `data` keys that only the site sets (leaderboard.trajectories.provenance drops them
from any file it reads):

- on a gateway `llm` step, `produced_step` (the index of the first step of the node its reply wrote)
  or `for_step` (the first step of the node it reviewed);
- on that node's first step, `llm_steps`: the indices of the calls that wrote and reviewed it.

The steps stream through a window of WINDOW steps, so both ends of a link are in memory when it is
made and a trajectory of any length is linked in bounded memory; AIDE writes a node right after the
call that wrote it and reviews it before the next, a few steps apart.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.provenance import CALLS, PRODUCED, REVIEWED, recorded_by_gateway

WINDOW = 256  # steps held back; an AIDE node spans 4 steps and 2 calls
REVIEW_CALL = "[tool call submit_review]"  # how the gateway writes a function call's reply (docs/gateway.md)


@dataclass
class _Node:
    first: StepData  # the node's plan step, which stands for it in the tree
    plan: str = ""
    code: str = ""
    analysis: str | None = None
    written: bool = False
    reviewed: bool = False
    calls: list[int] = field(default_factory=list)


def aide_links(steps: Iterable[StepData], window: int = WINDOW) -> Iterator[StepData]:
    """The steps of a joined AIDE + gateway trajectory, in order, with the links it allows."""
    held: deque[StepData] = deque()
    linker = _Linker()
    for step in steps:
        linker.see(step)
        held.append(step)
        if len(held) > window:
            linker.forget(held.popleft())
    yield from held


class _Linker:
    def __init__(self) -> None:
        self.nodes: dict[str, _Node] = {}  # node id -> the node, while its first step is held
        self.calls: list[tuple[StepData, str]] = []  # unlinked writing calls held, with their normalised reply

    def see(self, step: StepData) -> None:
        data = step.data if isinstance(step.data, dict) else {}
        if step.kind == "llm" and recorded_by_gateway(data):
            self._call(step, data)
            return
        node_id = data.get("node_id")
        if not isinstance(node_id, str):
            return
        if data.get("tree_node") is True:
            self.nodes[node_id] = _Node(first=step, plan=_normal(step.text))
        node = self.nodes.get(node_id)
        if node is None:
            return
        if step.kind == "code":
            node.code = _normal(data.get("content"))
            self._written(node)
        elif step.kind == "score":
            node.analysis = step.text.strip()

    def forget(self, step: StepData) -> None:
        self.calls = [(call, reply) for call, reply in self.calls if call is not step]
        data = step.data if isinstance(step.data, dict) else {}
        if data.get("tree_node") is True and isinstance(data.get("node_id"), str):
            self.nodes.pop(data["node_id"], None)

    def _call(self, step: StepData, data: dict) -> None:
        reply = data.get("reply")
        if not isinstance(reply, str) or not reply:
            return
        if reply.startswith(REVIEW_CALL):
            self._review(step, reply[len(REVIEW_CALL) :])
        elif data.get("reply_truncated") is not True:  # a cut reply may have lost the code
            self.calls.append((step, _normal(reply)))

    def _written(self, node: _Node) -> None:
        """The latest unlinked call before the node whose reply holds its plan and its code."""
        if not node.code:
            return
        for k in range(len(self.calls) - 1, -1, -1):
            call, reply = self.calls[k]
            if node.code in reply and node.plan in reply:
                del self.calls[k]
                node.written = True
                self._link(call, PRODUCED, node)
                return

    def _review(self, step: StepData, arguments: str) -> None:
        """The latest node before the call, not reviewed yet, whose analysis is the review's summary."""
        summary = _summary(arguments)
        if summary is None:
            return
        for node in reversed(list(self.nodes.values())):
            if not node.reviewed and node.analysis == summary:
                node.reviewed = True
                self._link(step, REVIEWED, node)
                return

    @staticmethod
    def _link(call: StepData, key: str, node: _Node) -> None:
        call.data = {**call.data, key: node.first.index}
        call.raw = None
        node.calls.append(call.index)  # type: ignore[arg-type]  # every step is numbered once joined
        node.first.data = {**node.first.data, CALLS: sorted(node.calls)}
        node.first.raw = None


def _summary(arguments: str) -> str | None:
    try:
        review = json.loads(arguments)
    except ValueError:
        return None
    summary = review.get("summary") if isinstance(review, dict) else None
    return summary.strip() if isinstance(summary, str) and summary.strip() else None


_SPACE = re.compile(r"\s+")
_TRAILING_COMMA = re.compile(r",(?=[)\]}])")


def _normal(text) -> str:
    """Text as black leaves it comparable with what the model wrote: no whitespace, one kind of quote,
    no trailing commas (black adds them where it splits a call over lines)."""
    if not isinstance(text, str):
        return ""
    text = _SPACE.sub("", text).replace("'", '"')
    return _TRAILING_COMMA.sub("", text)

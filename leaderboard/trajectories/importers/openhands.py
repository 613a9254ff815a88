"""OpenHands: a JSON array of events, streamed; an observation's `cause` is its action's id."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from leaderboard.trajectories.importers.base import (
    Importer,
    ParsedTrajectory,
    StepCounter,
    StepData,
    TrajectoryMeta,
    as_text,
    parse_time,
    register,
    stream_items,
    to_count,
    to_float,
)

ACTION_KINDS = {
    "run": "command",
    "run_ipython": "code",
    "edit": "code",
    "write": "code",
    "message": "message",
    "think": "plan",
    "finish": "submission",
    "change_agent_state": "message",
}
OBSERVATION_KINDS = {"error": "error", "agent_state_changed": "message"}


@register
class OpenHandsImporter(Importer):
    name = "openhands"

    def sniff(self, path, head, shape) -> bool:
        if shape is None or shape.top != "array":
            return False
        return "item.source" in shape.keys and ("item.action" in shape.keys or "item.observation" in shape.keys)

    def read(self, path: Path) -> Iterator[ParsedTrajectory]:
        parsed = ParsedTrajectory(format=self.name, meta=TrajectoryMeta(agent="OpenHands"), steps=iter(()))
        parsed.steps = _steps(path, parsed)
        yield parsed


def _steps(path: Path, parsed: ParsedTrajectory) -> Iterator[StepData]:
    make = StepCounter()
    by_event_id: dict = {}
    seen_responses: set[str] = set()
    start = end = None
    for event in stream_items(path, "item", parsed.warn):
        if not isinstance(event, dict):
            parsed.warn(f"event after step {make.next - 1}: not an object; skipped")
            continue
        stamp = parse_time(event.get("timestamp"))
        start = start or stamp
        end = stamp or end
        step = _event_step(make, event, by_event_id, parsed)
        step.t = (stamp - start).total_seconds() if stamp and start else None
        _count_usage(parsed.meta, event, seen_responses)
        by_event_id[event.get("id")] = step.index
        yield step
    parsed.meta.started_at = start
    if start and end:
        parsed.meta.duration_s = (end - start).total_seconds()


def _event_step(make: StepCounter, event: dict, by_event_id: dict, parsed: ParsedTrajectory) -> StepData:
    common = {"event_id": event.get("id"), "source": event.get("source")}
    if "action" in event:
        return _action_step(make, event, common)
    observation = str(event.get("observation") or "")
    data = {**common, "observation": observation, "extras": event.get("extras") or {}}
    cause = event.get("cause")
    if cause is not None:
        data["action_index"] = by_event_id.get(cause)
        if data["action_index"] is None:
            parsed.warn(f"event {event.get('id')}: cause {cause} is not an earlier event")
    extras = data["extras"] if isinstance(data["extras"], dict) else {}
    if observation == "run":
        data["exit_code"] = (extras.get("metadata") or {}).get("exit_code")
    if observation == "agent_state_changed":
        title = f"Agent state: {extras.get('agent_state')}"
    else:
        title = as_text(event.get("message"))[:200] or observation
    kind = OBSERVATION_KINDS.get(observation, "observation")
    return make(kind, title=title, text=as_text(event.get("content")), data=data)


def _action_step(make: StepCounter, event: dict, common: dict) -> StepData:
    action = str(event.get("action") or "")
    args = event.get("args") if isinstance(event.get("args"), dict) else {}
    kind = ACTION_KINDS.get(action, "action")
    data = {**common, "tool": action, "arguments": args, "thought": args.get("thought", "")}
    text = as_text(args.get("thought") or "")
    if kind == "command":
        data.update(command=args.get("command"), stdout="", stderr="", exit_code=None, duration=None)
    elif kind == "code":
        content = args.get("content") if action != "run_ipython" else args.get("code")
        data.update(file=args.get("path", ""), content=content or "", diff="")
    elif kind in ("message", "submission"):
        text = as_text(args.get("content") or args.get("final_thought") or event.get("message"))
        data["role"] = event.get("source")
    title = as_text(event.get("message"))[:200] or action
    return make(kind, title=title, text=text, data=data)


def _count_usage(meta: TrajectoryMeta, event: dict, seen: set[str]) -> None:
    metrics = event.get("llm_metrics")
    if isinstance(metrics, dict):  # newer OpenHands: running totals
        usage = metrics.get("accumulated_token_usage") or {}
        meta.cost_usd = to_float(metrics.get("accumulated_cost"))
        meta.tokens_in, meta.tokens_out = to_count(usage.get("prompt_tokens")), to_count(usage.get("completion_tokens"))
        return
    response = (event.get("tool_call_metadata") or {}).get("model_response") or {}
    if not response or response.get("id") in seen:
        return  # one response can carry several tool calls
    seen.add(response.get("id"))
    usage = response.get("usage") or {}
    meta.add_tokens(usage.get("prompt_tokens"), usage.get("completion_tokens"))
    meta.model = meta.model or str(response.get("model") or "")

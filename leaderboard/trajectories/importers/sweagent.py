"""SWE-agent .traj: thought + command + observation per turn, the patch as the submission."""

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
    first_item,
    register,
    stream_items,
    to_float,
)


@register
class SweAgentImporter(Importer):
    name = "sweagent"

    def sniff(self, path, head, shape) -> bool:
        if shape is None or shape.top != "object":
            return False
        return shape.has("trajectory.item.action") or ("trajectory" in shape.keys and "history" in shape.keys)

    def read(self, path: Path) -> Iterator[ParsedTrajectory]:
        info = first_item(path, "info") or {}
        parsed = ParsedTrajectory(format=self.name, meta=_meta(path, info), steps=iter(()))
        parsed.steps = _steps(path, info, parsed)
        yield parsed


def _meta(path: Path, info: dict) -> TrajectoryMeta:
    stats = info.get("model_stats") or {}
    meta = TrajectoryMeta(agent="SWE-agent", cost_usd=to_float(stats.get("instance_cost")))
    meta.add_tokens(stats.get("tokens_sent"), stats.get("tokens_received"))
    meta.extra = {"exit_status": info.get("exit_status"), "api_calls": stats.get("api_calls")}
    config = first_item(path, "replay_config")
    if isinstance(config, str):  # older versions store the config as a JSON string
        config = None
    config = config or {}
    meta.model = str(((config.get("agent") or {}).get("model") or {}).get("name") or "")
    problem = config.get("problem_statement") or {}
    meta.task_name = str(problem.get("id") or "") if isinstance(problem, dict) else ""
    return meta


def _steps(path: Path, info: dict, parsed: ParsedTrajectory) -> Iterator[StepData]:
    # .traj files record execution times but no wall clock, so steps carry no `t`.
    make = StepCounter()
    for turn in stream_items(path, "trajectory.item", parsed.warn):
        if not isinstance(turn, dict):
            parsed.warn(f"turn after step {make.next - 1}: not an object; skipped")
            continue
        thought = as_text(turn.get("thought") or turn.get("response"))
        if thought:
            yield make("plan", title="Thought", text=thought)
        duration = to_float(turn.get("execution_time"))
        command = as_text(turn.get("action")).strip()
        output = as_text(turn.get("observation"))
        yield make("command", title=command.splitlines()[0][:200] if command else "(no command)", text=output,
                   data={"command": command, "stdout": output, "stderr": "", "exit_code": None,
                         "duration": duration, "state": turn.get("state")})
    if info.get("submission"):
        yield make("submission", title=f"Submission ({info.get('exit_status')})", text=as_text(info["submission"]),
                   data={"file": "patch.diff", "exit_status": info.get("exit_status")})

"""MLAgentBench: env_log/trace.json actions and observations, merged with agent_log/main_log reasoning."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from leaderboard.trajectories.importers.base import (
    Importer,
    ParsedTrajectory,
    StepCounter,
    StepData,
    TrajectoryError,
    TrajectoryMeta,
    WorkspaceFolder,
    as_text,
    first_item,
    json_shape,
    parse_time,
    read_head,
    register,
    stream_items,
    to_float,
)

REASONING_FIELDS = {
    "Reflection": "reflection",
    "Research Plan and Status": "research_plan_and_status",
    "Fact Check": "fact_check",
    "Thought": "thought",
    "Action": "action",
    "Action Input": "action_input",
}
_FIELD_LINE = re.compile(r"^(Reflection|Research Plan and Status|Fact Check|Thought|Action|Action Input|Observation):")
_STEP_LINE = re.compile(r"^Step (\d+):\s*$")
FINAL_ANSWER = "Final Answer"
# Written by ResearchAgent itself around each step; main_log has no block for them.
BOOKKEEPING_ACTIONS = {"Append Summary to Research Log", "Retrieval from Research Log"}


@register
class MlAgentBenchImporter(Importer):
    name = "mlagentbench"

    def sniff(self, path, head, shape) -> bool:
        if path.is_dir():
            return (path / "env_log" / "trace.json").is_file()
        return shape is not None and shape.top == "object" and (
            shape.has("steps.item.action.name") or "low_level_steps" in shape.keys or "action_infos" in shape.keys
        )

    def read(self, path: Path) -> Iterator[ParsedTrajectory]:
        trace = path / "env_log" / "trace.json" if path.is_dir() else path
        meta = TrajectoryMeta(agent="MLAgentBench ResearchAgent")
        parsed = ParsedTrajectory(format=self.name, meta=meta, steps=iter(()))
        shape = json_shape(read_head(trace))
        if shape is None or not shape.has("steps"):
            raise TrajectoryError(f"{trace.name}: no 'steps' array")
        description = first_item(trace, "task_description")
        if isinstance(description, str):
            meta.extra["task_description"] = description
        main_log = find_main_log(trace)
        blocks = parse_main_log(main_log.read_text(errors="replace")) if main_log else []
        meta.extra["main_log"] = main_log is not None
        read_run_folder(trace, main_log, meta)
        parsed.steps = _steps(trace, blocks, parsed, step_folders(trace))
        yield parsed


SCAN_BYTES = 8 << 20  # of each log searched for MLAgentBench's failure markers


def _head(path: Path | None) -> str | None:
    if path is None or not path.is_file() or path.is_symlink():
        return None
    with open(path, "rb") as f:
        return f.read(SCAN_BYTES).decode("utf-8", errors="replace")


def read_run_folder(trace: Path, main_log: Path | None, meta: TrajectoryMeta) -> None:
    """What MLAgentBench's eval.py/plot.py read beside trace.json: env_log/error.txt, env_log/overall_time.txt
    (the run's duration), <run>/log and agent_log/main_log, as failure classes on the run. Only where the
    trace came in its folder (env_log/trace.json): a lone trace.json says nothing about them."""
    from leaderboard.lib.research_failures import trace_folder_classes

    if trace.name != "trace.json" or trace.parent.name != "env_log":
        return
    env_log, run_dir = trace.parent, trace.parent.parent
    overall = _head(env_log / "overall_time.txt")
    seconds = to_float(overall.strip()) if overall is not None else None
    if seconds is not None and seconds >= 0:
        meta.extra["overall_time_s"] = seconds
    meta.extra["failure_classes"] = trace_folder_classes(
        log=_head(run_dir / "log") or "", main_log=_head(main_log) or "", error_txt=_head(env_log / "error.txt"),
        has_overall_time=overall is not None)


_STEP_FOLDER = re.compile(r"^step_(\d{1,9}|final)_files$")


def step_folders(trace: Path) -> dict[int | None, Path]:
    """env_log/traces/step_<n>_files and step_final_files (None), as MLAgentBench's Environment.save writes
    them beside trace.json; a link is never taken for one."""
    traces = trace.parent / "traces"
    if trace.name != "trace.json" or not traces.is_dir() or traces.is_symlink():
        return {}
    found = {}
    for entry in traces.iterdir():
        match = _STEP_FOLDER.match(entry.name)
        if match and entry.is_dir() and not entry.is_symlink():
            found[None if match.group(1) == "final" else int(match.group(1))] = entry
    return found


def find_main_log(trace: Path) -> Path | None:
    candidates = [trace.parent.parent / "agent_log" / "main_log"]
    if trace.name.endswith("trace.json"):  # flattened copies: <prefix>trace.json next to <prefix>main_log
        candidates.append(trace.with_name(trace.name.removesuffix("trace.json") + "main_log"))
    return next((c for c in candidates if c.is_file()), None)


def parse_main_log(text: str) -> list[dict]:
    """The 'Step N:' blocks of a main_log, each as {field: text} with Observation left out."""
    blocks: list[dict] = []
    current: dict | None = None
    field: str | None = None
    for line in text.splitlines():
        if (m := _STEP_LINE.match(line)) is not None:
            current, field = {"step": int(m.group(1))}, None
            blocks.append(current)
            continue
        if current is None:
            continue
        if (m := _FIELD_LINE.match(line)) is not None:
            field = REASONING_FIELDS.get(m.group(1))  # None for Observation: the trace has it verbatim
            if field:
                current[field] = line[m.end():].strip()
            continue
        if field:
            current[field] = f"{current[field]}\n{line}".strip()
    return blocks


def _steps(trace: Path, blocks: list[dict], parsed: ParsedTrajectory,
           folders: dict[int | None, Path]) -> Iterator[StepData]:
    make = StepCounter()
    times: dict[int, float | None] = {}  # of the trace steps whose files were kept
    start = end = None
    pending = list(blocks)
    n = -1
    for n, item in enumerate(stream_items(trace, "steps.item", parsed.warn)):
        action = (item or {}).get("action") or {}
        name = str(action.get("name") or "")
        stamp = to_float(item.get("timestamp")) if isinstance(item, dict) else None
        start = stamp if start is None else start
        end = stamp if stamp is not None else end
        t = None if stamp is None or start is None else stamp - start
        if n in folders:
            times[n] = t
        if pending and name not in BOOKKEEPING_ACTIONS and pending[0].get("action", "").strip() == name:
            block = pending.pop(0)
            yield make("plan", title=f"Step {block['step']}: reasoning", text=_reasoning_text(block),
                       data={k: v for k, v in block.items() if k not in ("action", "action_input")}, t=t)
        kind = "submission" if name == FINAL_ANSWER else "action"
        args = action.get("args") if isinstance(action.get("args"), dict) else {"value": action.get("args")}
        act = make(kind, title=name or "(no action)", text=as_text(args.get("final_answer", "")),
                   data={"tool": name, "arguments": args, "trace_step": n}, t=t)
        yield act
        yield make("observation", title=f"Observation: {name}", text=as_text(item.get("observation")),
                   data={"action_index": act.index, "trace_step": n}, t=t)
    if pending:
        first = pending[0]["step"]
        parsed.warn(f"main_log: {len(pending)} reasoning block(s) matched no trace step (from Step {first})")
    parsed.meta.started_at = parse_time(start)
    parsed.meta.extra["agent_steps"] = n + 1  # as MLAgentBench counts steps: trace.json's, not ours
    if "overall_time_s" in parsed.meta.extra:  # MLAgentBench's own duration (eval.py's total_time)
        parsed.meta.duration_s = parsed.meta.extra["overall_time_s"]
    elif start is not None and end is not None:
        parsed.meta.duration_s = end - start
    parsed.workspaces = _workspaces(folders, times, parsed.meta.duration_s)


def _workspaces(folders: dict[int | None, Path], times: dict[int, float | None],
                duration: float | None) -> list[WorkspaceFolder]:
    """Each step's files at the step's time (from the first step's, as the replay counts), the final
    ones at the run's end; a step folder past the trace's steps has no time."""
    found = [WorkspaceFolder(path, n, times.get(n)) for n, path in sorted(
        ((n, p) for n, p in folders.items() if n is not None), key=lambda item: item[0])]
    if None in folders:
        found.append(WorkspaceFolder(folders[None], None, duration))
    return found


def _reasoning_text(block: dict) -> str:
    labels = {v: k for k, v in REASONING_FIELDS.items()}
    return "\n\n".join(f"{labels[k]}: {block[k]}" for k in ("reflection", "research_plan_and_status",
                                                             "fact_check", "thought") if block.get(k))

"""Inspect AI logs: a .eval ZIP or a .json EvalLog. Each sample is one trajectory.

A .eval is read through leaderboard.lib.archives, under the archive limits: a member that would unpack
past them (a small .eval holding a huge run of zeros) refuses the log, naming the member."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from leaderboard.lib.archives import ArchiveError, DamagedArchive, ZipArchive
from leaderboard.trajectories.importers.base import (
    Importer,
    ParsedTrajectory,
    StepCounter,
    StepData,
    TrajectoryError,
    TrajectoryMeta,
    as_text,
    first_item,
    parse_time,
    read_head,
    register,
    stream_items,
    to_float,
)
from leaderboard.trajectories.importers.numbers import repaired

# Inspect's CORRECT / INCORRECT / PARTIAL / NOANSWER score letters.
LETTER_SCORES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
STRUCTURAL_EVENTS = {"span_begin", "span_end", "step", "state", "store", "subtask"}
_SAMPLE_NAME = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")


@register
class InspectImporter(Importer):
    name = "inspect"

    def sniff(self, path, head, shape) -> bool:
        if not path.is_file():
            return False
        if head.startswith(b"PK"):
            try:
                with ZipArchive(path) as archive:
                    names = archive.directory_names()
            except ArchiveError:
                return False
            return "header.json" in names or any(n.startswith("samples/") for n in names)
        return shape is not None and shape.top == "object" and "eval" in shape.keys and (
            "version" in shape.keys or "eval.task" in shape.keys
        )

    def read(self, path: Path) -> Iterator[ParsedTrajectory]:
        reader = _read_zip if read_head(path, 2) == b"PK" else _read_json
        yield from reader(path, self.name)


def _read_json(path: Path, name: str) -> Iterator[ParsedTrajectory]:
    header = {"eval": first_item(path, "eval") or {}, "stats": first_item(path, "stats") or {}}
    if not header["eval"]:
        raise TrajectoryError(f"{path.name}: no readable 'eval' header")
    # A cut-off log is only noticed after the last complete sample was handed out, so the
    # problem comes back as one more, empty, trajectory that carries the warning.
    problems: list[str] = []
    count = 0
    for sample in stream_items(path, "samples.item", problems.append):
        count += 1
        yield _trajectory(name, header, sample, [])
    if problems or count == 0:
        yield _empty(name, header, problems or ["the log holds no samples"])


def _read_zip(path: Path, name: str) -> Iterator[ParsedTrajectory]:
    try:
        archive = ZipArchive(path)
    except ArchiveError as exc:
        raise TrajectoryError(f"{path.name}: not a readable .eval archive: {exc}") from exc
    with archive:
        try:
            archive.members()  # every member judged from its header before any is inflated
        except ArchiveError as exc:
            raise TrajectoryError(f"{path.name}: {exc}") from exc
        header = _zip_json(archive, path, "header.json") or {}
        names = sorted((n for n in archive.names() if _SAMPLE_NAME.match(n)), key=_sample_order)
        if not names:
            raise TrajectoryError(f"{path.name}: the archive holds no samples/")
        for member in names:
            problems: list[str] = [] if header else ["header.json is missing or unreadable"]
            try:
                sample = orjson.loads(repaired(archive.read(member)))
            except (orjson.JSONDecodeError, DamagedArchive) as exc:
                yield _empty(name, header, [f"{member}: unreadable ({exc.__class__.__name__}: {exc})"])
                continue
            except ArchiveError as exc:  # past a limit: the whole log is refused, naming the member
                raise TrajectoryError(f"{path.name}: {exc}") from exc
            yield _trajectory(name, header, sample, problems)


def _zip_json(archive: ZipArchive, path: Path, member: str) -> dict | None:
    try:
        value = orjson.loads(repaired(archive.read(member)))
    except (KeyError, orjson.JSONDecodeError, DamagedArchive):
        return None
    except ArchiveError as exc:
        raise TrajectoryError(f"{path.name}: {exc}") from exc
    return value if isinstance(value, dict) else None


def _sample_order(member: str) -> tuple:
    sample_id, epoch = _SAMPLE_NAME.match(member).groups()
    numeric = sample_id.isascii() and sample_id.isdigit()  # "²" is a digit to isdigit(), not to int()
    return (0, int(sample_id), "", int(epoch)) if numeric else (1, 0, sample_id, int(epoch))


def _meta(header: dict, sample: dict) -> TrajectoryMeta:
    spec = header.get("eval") or {}
    meta = TrajectoryMeta(
        task_name=str(spec.get("task") or ""),
        agent="Inspect",
        model=str(spec.get("model") or ""),
        sample_id=None if sample.get("id") is None else str(sample["id"]),
        duration_s=to_float(sample.get("total_time")),
        extra={"epoch": sample.get("epoch"), "eval_id": spec.get("eval_id"), "run_id": spec.get("run_id"),
               "target": sample.get("target")},
    )
    for usage in (sample.get("model_usage") or {}).values():
        meta.add_tokens(usage.get("input_tokens"), usage.get("output_tokens"))
    meta.final_score = next((s for s in map(_score_value, (sample.get("scores") or {}).values()) if s is not None),
                            None)
    return meta


def _trajectory(name: str, header: dict, sample: Any, problems: list[str]) -> ParsedTrajectory:
    if not isinstance(sample, dict):
        return _empty(name, header, ["a sample is not an object"])
    parsed = ParsedTrajectory(format=name, meta=_meta(header, sample), steps=iter(()))
    for problem in problems:
        parsed.warn(problem)
    parsed.steps = _steps(sample, parsed)
    return parsed


def _empty(name: str, header: dict, problems: list[str]) -> ParsedTrajectory:
    parsed = _trajectory(name, header, {}, [])
    for problem in problems:
        parsed.warn(problem)
    return parsed


def _steps(sample: dict, parsed: ParsedTrajectory) -> Iterator[StepData]:
    attachments = sample.get("attachments") or {}
    make = StepCounter()
    start = None
    tool_steps: dict[str, int] = {}
    for event in sample.get("events") or []:
        if not isinstance(event, dict):
            parsed.warn(f"event after step {make.next - 1}: not an object; skipped")
            continue
        stamp = parse_time(event.get("timestamp"))
        start = start or stamp
        parsed.meta.started_at = parsed.meta.started_at or stamp
        t = (stamp - start).total_seconds() if stamp and start else None
        for step in _event_steps(make, event, attachments, tool_steps):
            step.t = t
            yield step


def _resolve(value: Any, attachments: dict) -> Any:
    if isinstance(value, str) and value.startswith("attachment://"):
        return attachments.get(value.removeprefix("attachment://"), value)
    return value


def _event_steps(make: StepCounter, event: dict, attachments: dict, tool_steps: dict) -> Iterator[StepData]:
    kind = event.get("event")
    if kind in STRUCTURAL_EVENTS:
        return
    if kind == "sample_init":
        sample = event.get("sample") or {}
        yield make("message", title="Sample input", text=_content(_resolve(sample.get("input"), attachments),
                                                                  attachments),
                   data={"role": "user", "target": sample.get("target"), "sample_id": sample.get("id")})
    elif kind == "model":
        yield _model_step(make, event, attachments)
    elif kind == "tool":
        yield from _tool_steps(make, event, attachments, tool_steps)
    elif kind == "score":
        score = event.get("score") or {}
        value = _score_value(score)
        yield make("score", title=f"Score: {score.get('value')}", text=as_text(score.get("explanation")),
                   score=value, data={"metric": "score", "value": score.get("value"), "maximize": True,
                                      "answer": score.get("answer"), "target": event.get("target"),
                                      "intermediate": bool(event.get("intermediate"))})
    elif kind == "error":
        error = event.get("error") or {}
        yield make("error", title=as_text(error.get("message"))[:200] or "Error",
                   text=as_text(error.get("traceback")), data={"message": error.get("message")})
    elif kind == "sandbox":
        yield make("command", title=f"sandbox {event.get('action')}", text=as_text(event.get("output")),
                   data={"command": as_text(event.get("cmd")), "stdout": as_text(event.get("output")),
                         "stderr": "", "exit_code": event.get("result"), "duration": None})
    else:
        yield make("message", title=str(kind or "event"), text=_content(event.get("message") or event.get("data"),
                                                                       attachments),
                   data={"event": kind, "level": event.get("level")})


def _model_step(make: StepCounter, event: dict, attachments: dict) -> StepData:
    output = event.get("output") or {}
    choices = output.get("choices") or [{}]
    message = choices[0].get("message") or {}
    usage = output.get("usage") or {}
    data = {
        "model": event.get("model"),
        "tokens_in": usage.get("input_tokens"),
        "tokens_out": usage.get("output_tokens"),
        "cost": None,
        "stop_reason": choices[0].get("stop_reason"),
        "tool_calls": message.get("tool_calls") or [],
        "input_messages": len(event.get("input") or []),
        "duration": to_float(event.get("working_time")),
    }
    if event.get("error"):
        data["error"] = event["error"]
    return make("llm", title=str(event.get("model") or "model"), text=_content(message.get("content"), attachments),
                data=data)


def _tool_steps(make: StepCounter, event: dict, attachments: dict, tool_steps: dict) -> Iterator[StepData]:
    function = str(event.get("function") or "tool")
    action = make("action", title=function, data={"tool": function, "arguments": event.get("arguments") or {},
                                                  "call_id": event.get("id")})
    yield action
    error = event.get("error")
    yield make("error" if error else "observation", title=f"{function} result",
               text=_content(_resolve(event.get("result"), attachments), attachments),
               data={"action_index": action.index, "error": error})


def _content(value: Any, attachments: dict) -> str:
    """Message content: a string, or a list of content parts (text, reasoning, images...)."""
    value = _resolve(value, attachments)
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, dict):
                parts.append(as_text(_resolve(part.get("text") or part.get("reasoning") or
                                              f"[{part.get('type', 'content')}]", attachments)))
            else:
                parts.append(as_text(part))
        return "\n".join(parts)
    return as_text(value)


def _score_value(score: Any) -> float | None:
    value = score.get("value") if isinstance(score, dict) else score
    if isinstance(value, str) and value in LETTER_SCORES:
        return LETTER_SCORES[value]
    return to_float(value)

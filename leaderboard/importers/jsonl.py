"""Medalboard's own JSONL trajectory format (docs/trajectory-format.md), read line by line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from leaderboard.importers.base import (
    Importer,
    ParsedTrajectory,
    StepData,
    TrajectoryError,
    TrajectoryMeta,
    json_line_is_clean,
    parse_time,
    register,
    to_float,
    unified_diff,
)

FORMAT = "medalboard-trajectory"
VERSION = 1
STEP_FIELDS = ("kind", "t", "title", "text", "data", "score", "parent_index")


@register
class JsonlImporter(Importer):
    name = "jsonl"

    def sniff(self, path, head, shape) -> bool:
        if not path.is_file():
            return False
        first = head.split(b"\n", 1)[0]
        try:
            header = orjson.loads(first)
        except orjson.JSONDecodeError:
            return False
        return isinstance(header, dict) and header.get("format") == FORMAT

    def read(self, path: Path) -> Iterator[ParsedTrajectory]:
        with open(path, "rb") as f:
            header = _header(f.readline(), path)
        parsed = ParsedTrajectory(format=self.name, meta=meta_from_header(header), steps=iter(()))
        if header.get("version") != VERSION:
            parsed.warn(f"line 1: version {header.get('version')!r} is not {VERSION}; reading it as version {VERSION}")
        parsed.steps = _steps(path, parsed)
        yield parsed


def _header(line: bytes, path: Path) -> dict:
    try:
        header = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise TrajectoryError(f"{path.name}: line 1 is not a JSON header: {exc}") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TrajectoryError(f"{path.name}: line 1 is not a {FORMAT} header")
    return header


def meta_from_header(header: dict) -> TrajectoryMeta:
    known = {"format", "version", "task", "agent", "model", "started_at", "tokens_in", "tokens_out", "cost_usd",
             "duration_s", "final_score", "sample_id"}
    return TrajectoryMeta(
        task_name=str(header.get("task") or ""),
        agent=str(header.get("agent") or ""),
        model=str(header.get("model") or ""),
        tokens_in=_int(header.get("tokens_in")),
        tokens_out=_int(header.get("tokens_out")),
        cost_usd=to_float(header.get("cost_usd")),
        duration_s=to_float(header.get("duration_s")),
        started_at=parse_time(header.get("started_at")),
        final_score=to_float(header.get("final_score")),
        sample_id=None if header.get("sample_id") is None else str(header["sample_id"]),
        extra={k: v for k, v in header.items() if k not in known},
    )


def _int(value: Any) -> int | None:
    number = to_float(value)
    return None if number is None else int(number)


def _steps(path: Path, parsed: ParsedTrajectory) -> Iterator[StepData]:
    totals = _Totals(parsed.meta)
    files: dict[str, str] = {}  # latest content per file, to diff code steps that carry no diff
    index = 0
    last_t = None
    with open(path, "rb") as f:
        f.readline()
        for lineno, line in enumerate(f, start=2):
            if not line.strip():
                continue
            step = _step(line, lineno, index, parsed)
            if step is None:
                continue
            if step.kind == "code":
                _fill_diff(step.data, files)
            totals.add(step)
            last_t = step.t if step.t is not None else last_t
            index += 1
            yield step
    totals.finish(last_t)


def _step(line: bytes, lineno: int, index: int, parsed: ParsedTrajectory) -> StepData | None:
    try:
        obj = orjson.loads(line)
        clean = json_line_is_clean(line)  # the common case: sanitize need not look at the strings again
    except orjson.JSONDecodeError:
        obj, clean = _lenient(line, lineno, parsed), False
        if obj is None:
            return None
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
        parsed.warn(f"line {lineno}: a step must be an object with a 'kind'; skipped")
        return None
    data = obj.get("data") or {}
    if not isinstance(data, dict):
        parsed.warn(f"line {lineno}: 'data' is not an object; kept under data.value")
        data = {"value": data}
    if "index" in obj and obj["index"] != index:
        parsed.warn(f"line {lineno}: index {obj['index']!r} stored as {index}")
    parent = obj.get("parent_index")
    if parent is not None and not (type(parent) is int and 0 <= parent < index):  # bool is an int subclass
        parsed.warn(f"line {lineno}: parent_index {parent!r} is not an earlier step; dropped")
        parent = None
    return StepData(
        index=index,
        kind=obj["kind"],
        title=_str(obj.get("title")),
        text=_str(obj.get("text")),
        data=data,
        t=to_float(obj.get("t")),
        parent_index=parent,
        score=to_float(obj.get("score")),
        clean=clean,
    )


def _lenient(line: bytes, lineno: int, parsed: ParsedTrajectory) -> Any:
    """orjson refuses invalid UTF-8 and lone surrogates; keep such lines (they get flagged as binary)."""
    try:
        return json.loads(line.decode("utf-8", errors="surrogateescape"))
    except ValueError as exc:
        parsed.warn(f"line {lineno}: not valid JSON ({exc}); skipped")
        return None


def _str(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _fill_diff(data: dict, files: dict[str, str]) -> None:
    name, content = data.get("file"), data.get("content")
    if not isinstance(name, str) or not isinstance(content, str):
        return
    if "diff" not in data:
        previous = files.get(name)
        data["diff"] = "" if previous is None else unified_diff(previous, content, name)
    files[name] = content


class _Totals:
    """Token and cost totals summed from llm steps when the header does not give them."""

    def __init__(self, meta: TrajectoryMeta) -> None:
        self.meta = meta
        self.sum_tokens = meta.tokens_in is None and meta.tokens_out is None
        self.sum_cost = meta.cost_usd is None

    def add(self, step: StepData) -> None:
        if step.kind != "llm":
            return
        d = step.data
        if self.sum_tokens:
            self.meta.add_tokens(_int(d.get("tokens_in")), _int(d.get("tokens_out")))
        if self.sum_cost:
            self.meta.add_tokens(None, None, to_float(d.get("cost")))
        if not self.meta.model and isinstance(d.get("model"), str):
            self.meta.model = d["model"]

    def finish(self, last_t: float | None) -> None:
        if self.meta.duration_s is None and last_t is not None:
            self.meta.duration_s = last_t


def header_line(meta: dict) -> bytes:
    return orjson.dumps({"format": FORMAT, "version": VERSION, **meta}) + b"\n"


def step_line(step: StepData | dict) -> bytes:
    obj = step.as_dict() if isinstance(step, StepData) else step
    return orjson.dumps({k: v for k, v in obj.items() if v not in (None, "", {})}) + b"\n"

"""Medalboard's own JSONL trajectory format (docs/trajectory-format.md), read line by line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import numpy as np
import orjson

from leaderboard.trajectories.importers.base import (
    MAX_COUNT,
    TITLE_MAX,
    Importer,
    ParsedTrajectory,
    StepData,
    TrajectoryError,
    TrajectoryMeta,
    json_line_is_clean,
    parse_time,
    register,
    to_count,
    to_float,
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
        parsed = ParsedTrajectory(format=self.name, meta=TrajectoryMeta(), steps=iter(()))
        parsed.meta = meta_from_header(header, parsed)
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
    for name, types in HEADER_TYPES.items():
        value = header.get(name)
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            expected = " or ".join(t.__name__ for t in types)
            raise TrajectoryError(f"{path.name}: line 1: {name!r} must be {expected}, not {type(value).__name__}")
    return header


# The header fields docs/trajectory.schema.json types (null is accepted for each: "not known").
HEADER_TYPES: dict[str, tuple[type, ...]] = {
    "task": (str,), "agent": (str,), "model": (str,), "started_at": (str,),
    "tokens_in": (int, float), "tokens_out": (int, float),  # JSON readers give integers past 2^64 as floats
    "cost_usd": (int, float), "duration_s": (int, float), "final_score": (int, float),
    "sample_id": (str, int),
}


def meta_from_header(header: dict, parsed: ParsedTrajectory | None = None) -> TrajectoryMeta:
    known = {"format", "version", "task", "agent", "model", "started_at", "tokens_in", "tokens_out", "cost_usd",
             "duration_s", "final_score", "sample_id"}
    return TrajectoryMeta(
        task_name=str(header.get("task") or ""),
        agent=str(header.get("agent") or ""),
        model=str(header.get("model") or ""),
        tokens_in=_count(header.get("tokens_in"), "line 1: tokens_in", parsed),
        tokens_out=_count(header.get("tokens_out"), "line 1: tokens_out", parsed),
        cost_usd=to_float(header.get("cost_usd")),
        duration_s=to_float(header.get("duration_s")),
        started_at=parse_time(header.get("started_at")),
        final_score=to_float(header.get("final_score")),
        sample_id=None if header.get("sample_id") is None else str(header["sample_id"]),
        extra={k: v for k, v in header.items() if k not in known},
    )


def _count(value: Any, where: str, parsed: ParsedTrajectory | None) -> int | None:
    """A token count as a whole number the database can hold; anything beyond is dropped, with a warning."""
    number = to_count(value)
    if number is None and value is not None and parsed is not None:
        shown = f"{value:.3g}" if isinstance(value, int | float) else repr(value)[:40]
        parsed.warn(f"{where} = {shown} is not a count between 0 and 2^63; not counted")
    return number


def _steps(path: Path, parsed: ParsedTrajectory) -> Iterator[StepData]:
    totals = _Totals(parsed.meta, parsed)
    index = 0
    last_t = None
    decode, error = _decode_stored_line, msgspec.MsgspecError
    first_lineno = 2  # after the header
    for lines, suspect in _chunks(path):
        for lineno, line in enumerate(lines, start=first_lineno):
            # The import's hot path (benchmarks/ingest.py). A line that already is a valid stored line
            # (none of the escapes _NOT_RAW names, fields of the right types as decoding checks, its index
            # if any the position, its parent an earlier step) costs one typed decode and is stored as
            # it is (StepData.raw). Anything else goes through _step, which repairs and warns.
            step = None
            if not suspect or not _suspect(line):
                try:
                    step = decode(line)
                except error:
                    pass
                else:
                    if (step.index is None or step.index == index) and (
                            step.parent_index is None or step.parent_index < index):
                        step.index, step.clean, step.raw = index, True, line
                    else:
                        step = None
            if step is None:
                if not line.strip():
                    continue
                step = _step(line, lineno, index, parsed)
                if step is None:
                    continue
            if step.kind == "llm":
                totals.add(step, lineno)
            if step.t is not None:
                last_t = step.t
            index += 1
            yield step
        first_lineno += len(lines)
    totals.finish(last_t)


CHUNK_BYTES = 1 << 20


def _chunks(path: Path) -> Iterator[tuple[list[bytes], bool]]:
    """The step lines (without their newline) about a megabyte at a time, after the header, each batch
    with whether any line in it holds a byte or escape that bars storing it as it is (_NOT_RAW):
    one C scan per megabyte instead of three per line."""
    with open(path, "rb") as f:
        f.readline()
        pending: list[bytes] = []  # the start of a line that has not ended yet (one step can span chunks)
        while chunk := f.read(CHUNK_BYTES):
            if b"\n" not in chunk:
                pending.append(chunk)  # joined once its line ends: a long line costs linear time
                continue
            buffer = b"".join([*pending, chunk])
            lines = buffer.split(b"\n")
            pending = [lines.pop()]
            yield lines, _suspect_chunk(buffer)
        if tail := b"".join(pending):
            yield [tail], _suspect(tail)


def _suspect(buffer: bytes) -> bool:
    return b"\x7f" in buffer or b"\r" in buffer or _NOT_RAW.search(buffer) is not None


_NOT_RAW_ESCAPES = np.frombuffer(b"ubf/", dtype=np.uint8)  # the bytes after a backslash that _NOT_RAW names


def _suspect_chunk(buffer: bytes) -> bool:
    """_suspect for a megabyte: the byte after every backslash, found by NumPy (a third faster than the
    regular expression on a chunk; slower on one line)."""
    if b"\x7f" in buffer or b"\r" in buffer:
        return True
    raw = np.frombuffer(buffer, dtype=np.uint8)
    return bool(np.isin(raw[1:][raw[:-1] == ord("\\")], _NOT_RAW_ESCAPES).any())


def parse_step_line(line: bytes, lineno: int, index: int, parsed: ParsedTrajectory) -> StepData | None:
    """One step line read on its own (a runner streaming a trajectory as the agent writes it): the
    step it holds as the `index`-th step, or None for a blank or unreadable line (warned in `parsed`)."""
    return _step(line, lineno, index, parsed) if line.strip() else None


def is_header_line(line: bytes) -> bool:
    try:
        header = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(header, dict) and header.get("format") == FORMAT


def _step(line: bytes, lineno: int, index: int, parsed: ParsedTrajectory) -> StepData | None:
    """The general path: a line that needs repairs, warnings or escaping."""
    try:
        obj = orjson.loads(line)
        clean = json_line_is_clean(line)  # usually: sanitize need not look at the strings again
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


# A line holding none of these can be stored as it is: no \u escape (so no junk, no surrogate, no
# ASCII written escaped, which search relies on: see trajectories.store.StoredTrajectory.search), no
# \b, \f or \/ escape, no DEL, no carriage return (the stored file splits on newlines only).
_NOT_RAW = re.compile(rb"\\[ubf/]")  # a literal first byte: one fast C scan; DEL and CR are tested apart


class _StoredLine(StepData, kw_only=True, gc=False):
    """A step line as the stored file keeps it (docs/trajectory-format.md). Decoding into it checks
    every field's type in C, which is what lets a valid line skip the general path; and as a StepData
    it goes on as the step itself. (A line that sets "clean" or "raw" gets them overwritten.)"""

    kind: Literal["plan", "action", "observation", "code", "command", "score", "llm", "submission", "error",
                  "message"]
    title: Annotated[str, msgspec.Meta(max_length=TITLE_MAX)] = ""
    parent_index: Annotated[int, msgspec.Meta(ge=0)] | None = None


_decode_stored_line = msgspec.json.Decoder(_StoredLine).decode


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


class _Totals:
    """Token and cost totals summed from llm steps when the header does not give them."""

    def __init__(self, meta: TrajectoryMeta, parsed: ParsedTrajectory) -> None:
        self.meta, self.parsed = meta, parsed
        self.sum_tokens = meta.tokens_in is None and meta.tokens_out is None
        self.sum_cost = meta.cost_usd is None

    def add(self, step: StepData, lineno: int) -> None:
        if step.kind != "llm":
            return
        d, meta = step.data, self.meta
        if self.sum_tokens:
            # A whole count in range is taken as it is; anything else goes through _count, which warns.
            tokens_in, tokens_out = d.get("tokens_in"), d.get("tokens_out")
            if tokens_in is not None and (type(tokens_in) is not int or not 0 <= tokens_in <= MAX_COUNT):
                tokens_in = _count(tokens_in, f"line {lineno}: tokens_in", self.parsed)
            if tokens_out is not None and (type(tokens_out) is not int or not 0 <= tokens_out <= MAX_COUNT):
                tokens_out = _count(tokens_out, f"line {lineno}: tokens_out", self.parsed)
            meta.add_tokens(tokens_in, tokens_out)
            if (meta.tokens_in or 0) > MAX_COUNT or (meta.tokens_out or 0) > MAX_COUNT:
                for name in ("tokens_in", "tokens_out"):
                    if (getattr(meta, name) or 0) > MAX_COUNT:
                        self.parsed.warn(f"line {lineno}: the {name} total passes 2^63; not counted")
                        setattr(meta, name, None)
        if self.sum_cost:
            cost = d.get("cost")
            meta.add_tokens(None, None, cost if type(cost) is float else to_float(cost))
        if not meta.model and isinstance(d.get("model"), str):
            meta.model = d["model"]

    def finish(self, last_t: float | None) -> None:
        if self.meta.duration_s is None and last_t is not None:
            self.meta.duration_s = last_t


def header_line(meta: dict) -> bytes:
    return orjson.dumps({"format": FORMAT, "version": VERSION, **meta}) + b"\n"


def step_line(step: StepData | dict) -> bytes:
    return step_json(step) + b"\n"


def step_json(step: StepData | dict) -> bytes:
    """One step line without its newline, empty fields left out: what files hold and the store writes."""
    obj = step.as_dict() if isinstance(step, StepData) else step
    obj = {k: v for k, v in obj.items() if v not in (None, "", {})}
    try:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits and other rarities
        return json.dumps(obj, default=str, ensure_ascii=False).encode("utf-8", "surrogateescape")

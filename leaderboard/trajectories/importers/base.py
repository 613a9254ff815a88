"""The one importer interface: what every format module produces and the helpers they share.

An importer turns a file (or a run folder) into ParsedTrajectory objects whose steps are a lazy
iterator, so a trajectory of any length is read in bounded memory. Agent output is untrusted:
text is kept as written, except that bytes which are not valid UTF-8 text (NUL and other control
characters, lone surrogates) are replaced by a visible escape and the step is marked
``data["binary"] = True``.
"""

from __future__ import annotations

import difflib
import io
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import ijson
import msgspec
import numpy as np
import orjson

from leaderboard.trajectories.importers.numbers import open_json, repaired

HEAD_BYTES = 1 << 20  # how much of a file detection looks at
MAX_WARNINGS = 200
TITLE_MAX = 500


class TrajectoryError(Exception):
    """Nothing at all could be read from the file."""


class StepData(msgspec.Struct, kw_only=True, gc=False):
    """One step as importers produce it (the event model of docs/trajectory-format.md).

    A msgspec Struct, so the JSONL importer can decode a valid line straight into one (see
    jsonl._StoredLine); built in Python, nothing is validated: _checked and sanitize do that.
    `index` is always set once a step leaves an importer."""

    kind: str
    index: int | None = None
    title: str = ""
    text: str = ""
    data: dict = {}
    t: float | None = None
    parent_index: int | None = None
    score: float | None = None
    # Set by an importer that has already made the step safe: title and text are str, t and score finite
    # floats or None, data a dict, and no string holds junk, proven from the raw input (see
    # json_line_is_clean). sanitize then only cuts the title instead of scanning every string again.
    clean: bool = False
    # Set by an importer that has proven the step's input line is already a valid, clean line of the
    # stored file (see jsonl._steps): the store then keeps these bytes instead of serializing again.
    raw: bytes | None = None

    def as_dict(self) -> dict:
        """The fields as a plain dict (data is not copied)."""
        return {f: getattr(self, f) for f in STEP_FIELDS}


STEP_FIELDS = ("index", "kind", "title", "text", "data", "t", "parent_index", "score")


@dataclass
class TrajectoryMeta:
    task_name: str = ""
    agent: str = ""
    model: str = ""
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    duration_s: float | None = None
    started_at: datetime | None = None
    final_score: float | None = None
    sample_id: str | None = None
    extra: dict = field(default_factory=dict)

    def add_tokens(self, tokens_in: Any, tokens_out: Any, cost: Any = None) -> None:
        """Add one call's usage as the trajectory gives it: what is no count (or no finite cost) is skipped."""
        if (tokens_in := to_count(tokens_in)) is not None:
            self.tokens_in = (self.tokens_in or 0) + tokens_in
        if (tokens_out := to_count(tokens_out)) is not None:
            self.tokens_out = (self.tokens_out or 0) + tokens_out
        if (cost := to_float(cost)) is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost

    def totals(self) -> dict[str, Any]:
        """The run's usage and timing fields as its columns hold them; a total out of range is None
        (kept out of the database, where it would fail the write or turn into infinity later)."""
        return {"tokens_in": to_count(self.tokens_in), "tokens_out": to_count(self.tokens_out),
                "cost_usd": to_float(self.cost_usd), "duration_s": to_float(self.duration_s),
                "started_at": self.started_at}


@dataclass(frozen=True)
class WorkspaceFolder:
    """A folder of the workspace's files: `step` is the trajectory's step it was saved after (None: the
    final one), `seconds` its time into the run where the trajectory says (None where it does not)."""

    path: Path
    step: int | None
    seconds: float | None


@dataclass
class ParsedTrajectory:
    """One trajectory. `steps` is consumed once; `warnings` and some `meta` totals fill as it is."""

    format: str
    meta: TrajectoryMeta
    steps: Iterator[StepData]
    warnings: list[str] = field(default_factory=list)
    suppressed_warnings: int = 0
    # The agent's workspace as the trajectory's folder kept it at points of the run (MLAgentBench's
    # traces/step_<n>_files and step_final_files): filled once `steps` is consumed (their times are the steps').
    workspaces: list[WorkspaceFolder] = field(default_factory=list)

    def warn(self, message: str) -> None:
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(message)
        else:
            self.suppressed_warnings += 1


class Importer:
    """A trajectory format. Subclasses set `name` and implement `sniff` and `read`."""

    name: ClassVar[str]

    def sniff(self, path: Path, head: bytes, shape: JsonShape | None) -> bool:
        raise NotImplementedError

    def read(self, path: Path) -> Iterator[ParsedTrajectory]:
        raise NotImplementedError


registry: dict[str, Importer] = {}


def register(cls: type[Importer]) -> type[Importer]:
    registry[cls.name] = cls()
    return cls


# --- Detection helpers ------------------------------------------------------------------------


@dataclass
class JsonShape:
    """What the first bytes of a JSON document look like: its top-level type and key paths."""

    top: str  # "object" or "array"
    keys: set[str]

    def has(self, *paths: str) -> bool:
        return all(p in self.keys for p in paths)


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    with open(path, "rb") as f:
        return f.read(size)


def json_shape(head: bytes, max_events: int = 50_000) -> JsonShape | None:
    """Key paths (ijson prefixes, e.g. 'nodes.item.plan') seen in a possibly cut-off JSON head.

    A head nested deeper than MAX_JSON_DEPTH has no shape: every ijson event carries its whole path,
    so 100,000 nested brackets (200 KB) would cost minutes; no trajectory format nests like that."""
    stripped = head.lstrip()
    if stripped[:1] not in (b"{", b"[") or nesting_depth(head) > MAX_JSON_DEPTH:
        return None
    head = repaired(head)
    shape = JsonShape("object" if stripped[:1] == b"{" else "array", set())
    try:
        for n, (prefix, event, value) in enumerate(ijson.parse(io.BytesIO(head), multiple_values=True)):
            if event == "map_key":
                shape.keys.add(f"{prefix}.{value}" if prefix else value)
            if n >= max_events:
                break
    except (ijson.JSONError, ValueError):
        pass  # a head is usually cut mid-value
    return shape


MAX_JSON_DEPTH = 256


def nesting_depth(text: bytes) -> int:
    """The deepest bracket nesting of JSON text, brackets inside strings not counted; a few NumPy
    passes (milliseconds for a megabyte). A quote ends or starts a string unless an odd number of
    backslashes comes right before it."""
    a = np.frombuffer(text, dtype=np.uint8)
    if a.size == 0:
        return 0
    at = np.arange(a.size)
    last_other = np.maximum.accumulate(np.where(a == 92, -1, at))  # the last non-backslash up to here
    backslashes_before = np.zeros(a.size, dtype=np.int64)
    backslashes_before[1:] = at[:-1] - last_other[:-1]
    quote = (a == 34) & (backslashes_before % 2 == 0)
    outside = (np.cumsum(quote) - quote) % 2 == 0
    opens = (a == 91) | (a == 123)
    closes = (a == 93) | (a == 125)
    return int(np.cumsum((opens & outside).astype(np.int32) - (closes & outside)).max(initial=0))


# --- Reading helpers -----------------------------------------------------------------------------


def stream_items(path: Path, prefix: str, on_error: Callable[[str], None]) -> Iterator[Any]:
    """Items under `prefix` (e.g. 'item', 'steps.item') one at a time; a broken tail becomes a warning."""
    n = 0
    try:
        with open_json(path) as f:
            for item in ijson.items(f, prefix, use_float=True):
                yield item
                n += 1
    except (ijson.JSONError, ValueError, UnicodeDecodeError) as exc:
        on_error(f"{prefix.removesuffix('.item') or 'array'}: file is truncated or malformed after item {n}: {exc}")


def first_item(path: Path, prefix: str) -> Any:
    """The first value at `prefix` (a small top-level key), or None if absent or unreadable."""
    try:
        with open_json(path) as f:
            for item in ijson.items(f, prefix, use_float=True):
                return item
    except (ijson.JSONError, ValueError, UnicodeDecodeError):
        return None
    return None


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 string or a Unix timestamp as an aware datetime."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, int | float):
            return datetime.fromtimestamp(float(value), tz=UTC)
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except (ValueError, OverflowError, OSError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


MAX_COUNT = 2**63 - 1  # Run.tokens_in and tokens_out are 64-bit


def to_count(value: Any) -> int | None:
    """A count from 0 to 2^63 - 1 as a column holds it (a fraction is cut to its whole part), or None:
    JSON readers give integers past 2^64 as floats, and some give infinity."""
    if type(value) is int or type(value) is bool:
        return int(value) if 0 <= value <= MAX_COUNT else None
    number = to_float(value)
    if number is None or not 0 <= number <= MAX_COUNT:
        return None
    return int(number)


def to_float(value: Any) -> float | None:
    """A finite float, or None (JSON has no NaN or infinity)."""
    if type(value) is float:  # the common case, kept cheap: this runs for every step
        return value if value - value == 0 else None
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if number - number == 0 else None


def unified_diff(old: str, new: str, name: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=f"a/{name}", tofile=f"b/{name}"
    )
    return "".join(lines)


def as_text(value: Any) -> str:
    """Free-form agent output (a string, a list of lines or chunks, or anything else) as one string."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="surrogateescape")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


class StepCounter:
    """Hands out consecutive 0-based indexes while an importer builds its steps."""

    def __init__(self) -> None:
        self.next = 0

    def __call__(self, kind: str, **fields: Any) -> StepData:
        step = StepData(index=self.next, kind=kind, **fields)
        self.next += 1
        return step


# --- Untrusted text --------------------------------------------------------------------------------

# C0 controls except tab/newline/carriage return/escape (ANSI colours are ordinary terminal output),
# DEL, and lone surrogates (what non-UTF-8 bytes decode to with surrogateescape).
_JUNK = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a raw byte kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_JUNK_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])


def clean_text(value: str) -> tuple[str, bool]:
    """(safe text, whether anything had to be escaped)."""
    try:
        raw = value.encode()  # fails on lone surrogates
    except UnicodeEncodeError:
        pass
    else:
        if len(raw.translate(None, _JUNK_BYTES)) == len(raw):  # ~8x faster than a regex search
            return value, False
    return _JUNK.sub(_escape, value), True


def clean_value(value: Any) -> tuple[Any, bool]:
    """A JSON value with every string cleaned, and whether any was junk."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        junk = False
        out = {}
        for k, v in value.items():
            k2, j1 = clean_text(str(k))
            out[k2], j2 = clean_value(v)
            junk = junk or j1 or j2
        return out, junk
    if isinstance(value, list | tuple):
        junk = False
        items = []
        for v in value:
            v2, j = clean_value(v)
            items.append(v2)
            junk = junk or j
        return items, junk
    if isinstance(value, float) and (value != value or abs(value) == float("inf")):
        return str(value), False  # JSON has no NaN/Infinity
    return value, False


# What junk looks like once orjson has serialized it: \u0000-\u001f escapes, \b, \f, raw DEL.
_JSON_JUNK = re.compile(rb"\\u00[01][0-9a-fA-F]|\\[bf]|\x7f")


def _data_is_clean(data: dict) -> bool:
    """Fast path: one C-level serialization instead of walking every string in Python."""
    try:
        blob = orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return False  # lone surrogates, odd types: let the slow path decide
    return _JSON_JUNK.search(blob) is None


# The same junk as it can appear in JSON *input* that orjson accepted: orjson refuses raw C0 controls,
# lone surrogates and invalid UTF-8, so junk can only be an escape (\u0000-\u001f, \u007f, \b, \f, a
# surrogate escape; pairs match too, harmlessly) or a raw DEL. One literal-prefixed C scan per line.
_JSON_INPUT_JUNK = re.compile(rb"\\(?:u00[01]|u007[fF]|u[dD][89a-fA-F]|[bf])")


def json_line_is_clean(raw: bytes) -> bool:
    """Whether a JSON text that orjson parsed can hold no junk string (false positives are fine)."""
    return b"\x7f" not in raw and _JSON_INPUT_JUNK.search(raw) is None


def sanitize(step: StepData) -> StepData:
    if not step.clean:
        title, j1 = clean_text(step.title or "")
        text, j2 = clean_text(step.text or "")
        data, j3 = step.data or {}, False
        if not _data_is_clean(data):
            data, j3 = clean_value(data)
        step.title, step.text, step.data = title, text, data
        if step.score is not None:
            step.score = to_float(step.score)
        if step.t is not None:
            step.t = to_float(step.t)
        if j1 or j2 or j3:
            step.data["binary"] = True
    step.title = step.title[:TITLE_MAX]
    return step


# Our own JSONL first (its header line says what it is, and needs no look at the JSON's shape), then
# directory formats, then the specific JSON shapes.
DETECTION_ORDER = ["jsonl", "mlagentbench", "mlebench_run", "inspect", "aide", "sweagent", "openhands"]
_NOT_YET = object()


def detect(path: Path) -> str | None:
    """The format name of a trajectory file or run folder, judged from its content."""
    path = Path(path)
    if not path.exists():
        return None
    head, shape = b"", _NOT_YET
    if path.is_file():
        head = read_head(path)
        if not head:
            return None
    for name in DETECTION_ORDER:
        if name != "jsonl" and shape is _NOT_YET:  # ~10 ms on a megabyte: only once the header check failed
            shape = json_shape(head) if head and not zipfile.is_zipfile(path) else None
        try:
            if registry[name].sniff(path, head, shape):
                return name
        except (OSError, ValueError):
            continue
    return None

"""What the gateway writes down: one trajectory step per call, to a JSONL file and a callback.

The file is a trajectory of the project's JSONL format (docs/trajectory-format.md: a header line,
then steps), so the runner can stream its lines live as it streams the agent's own and an import of
the file gives the same steps. A call is an `llm` step: model, tokens in and out as the upstream
counted them, cost, latency, status, a SHA-256 digest of the whole prompt, and the prompt and the
reply themselves bounded in size (the latest messages are kept, older ones counted). A request the
gateway answers itself (a limit, a missing token, no upstream) is an `error` step saying why.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger(__name__)
PROMPT_BYTES = 64 * 1024  # of the prompt kept in a step (the digest covers all of it)
REPLY_CHARS = 16 * 1024
FLUSH_S = 0.2
MAX_ERROR_STEPS = 200  # refusals recorded as steps; past that only counted (an agent in a retry loop)
# The file's header, as docs/trajectory-format.md names it. The gateway writes the format as an agent
# does, without the site's importer: it runs on runners attached by URL and token, which hold none of it.
FORMAT, VERSION = "medalboard-trajectory", 1

Step = dict[str, Any]


class Recorder:
    """Steps go to the callback at once and to the file's buffer; the gateway flushes the file within
    FLUSH_S of a step (a write per call would cost more than the rest of the gateway's work)."""

    def __init__(self, path: Path | None, on_step: Callable[[Step], None] | None = None,
                 started_at: float | None = None) -> None:
        self.path, self.on_step = path, on_step
        self.started_at = time.time() if started_at is None else started_at
        self.error_steps = 0
        self._lock = threading.Lock()
        self._file = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "ab")  # noqa: SIM115 - open for the gateway's life; flush() empties its buffer
            if self._file.tell() == 0:
                self._file.write(json_line({"format": FORMAT, "version": VERSION, "agent": "medalboard-llm-gateway"}))
                self._file.flush()

    def llm(self, data: dict[str, Any]) -> Step:
        tokens = f"{data.get('tokens_in') or 0:,} + {data.get('tokens_out') or 0:,} tokens"
        title = f"{data.get('model') or data.get('provider')} · {data.get('status')} · {tokens}"
        return self._write({"kind": "llm", "t": self._t(), "title": title[:200], "data": data})

    def error(self, message: str, data: dict[str, Any]) -> Step | None:
        if self.error_steps >= MAX_ERROR_STEPS:
            return None
        self.error_steps += 1
        return self._write({"kind": "error", "t": self._t(), "title": f"LLM call refused: {message}"[:200],
                            "text": message, "data": {"message": message, **data}})

    def count_from(self, started_at: float) -> None:
        """Step times from now on count from `started_at` (the agent's start, the run's one clock)."""
        self.started_at = started_at

    def flush(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _t(self) -> float:
        return max(0.0, round(time.time() - self.started_at, 3))  # a call as the clock is set is at its start

    def _write(self, step: Step) -> Step:
        with self._lock:
            if self._file is not None:
                self._file.write(json_line(step))
        if self.on_step is not None:
            try:
                self.on_step(step)
            except Exception:  # noqa: BLE001 - a broken callback must not break the agent's calls
                log.exception("the gateway's step callback failed")
        return step


def json_line(obj: dict[str, Any]) -> bytes:
    """One line of the file. A reply's numbers past 64 bits (an upstream's odd usage) are written as
    text rather than lose the step."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS) + b"\n"
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(obj, default=str, ensure_ascii=False).encode("utf-8", "surrogateescape") + b"\n"


def digest(prompt: Any) -> str:
    return hashlib.sha256(orjson.dumps(prompt, option=orjson.OPT_SORT_KEYS)).hexdigest()


def bounded_prompt(prompt: dict[str, Any], limit: int = PROMPT_BYTES) -> tuple[dict[str, Any], int]:
    """The prompt fields within about `limit` bytes of JSON, and how many list items (the oldest
    messages) were left out. The other fields (a system prompt) come first, with half the budget at
    most; a field that still does not fit is kept as the start of its JSON text."""
    if len(orjson.dumps(prompt)) <= limit:
        return prompt, 0
    kept, omitted, budget = {}, 0, limit
    for name, value in sorted(prompt.items(), key=lambda item: isinstance(item[1], list)):
        if isinstance(value, list):
            value, dropped = _latest(value, budget)
            omitted += dropped
        value = _cut(value, budget if isinstance(value, list) else budget // 2)
        kept[name] = value
        budget = max(0, budget - len(orjson.dumps(value)))
    return kept, omitted


def _cut(value: Any, budget: int) -> Any:
    text = orjson.dumps(value)
    return value if len(text) <= budget else text[:budget].decode("utf-8", errors="ignore")


def _latest(items: list, budget: int) -> tuple[list, int]:
    """The last items of the list whose JSON fits in `budget` bytes (at least the last one)."""
    total, start = 0, len(items)
    while start > 0:
        size = len(orjson.dumps(items[start - 1])) + 1
        if total + size > budget and start < len(items):
            break
        total += size
        start -= 1
    return items[start:], start


def bounded_text(text: str, limit: int = REPLY_CHARS) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit], True)

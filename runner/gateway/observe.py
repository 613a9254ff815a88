"""Reading a reply as it passes: usage and text, from a whole JSON body or from server-sent events.

The bytes go on to the client untouched and at once; the observer only looks. A stream is read
event by event (the `data:` lines up to a blank line); a whole body is kept up to BODY_BYTES and
parsed when it ends. What cannot be parsed simply yields no usage: the call is recorded without.
"""

from __future__ import annotations

import re

import orjson

from runner.gateway.providers import Provider, Usage
from runner.gateway.record import REPLY_CHARS

BODY_BYTES = 8 << 20  # of a non-streamed reply kept whole for reading; past it, only its tail
TAIL_BYTES = 64 << 10  # where a long reply's usage is looked for (OpenAI's and Anthropic's come last)
LINE_BYTES = 4 << 20  # of one SSE line; a longer one is skipped
USAGE_IN_TAIL = re.compile(rb'"(usage|usageMetadata)"\s*:\s*(\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})')


class Observer:
    def __init__(self, provider: Provider, event_stream: bool) -> None:
        self.provider, self.event_stream = provider, event_stream
        self.usage = Usage()
        self.reply: list[str] = []
        self.reply_chars = 0
        self.reply_cut = False
        self._body = bytearray()
        self._line = bytearray()
        self._data: list[bytes] = []
        self._overflow = False

    def feed(self, chunk: bytes) -> None:
        if not self.event_stream:
            if not self._overflow and len(self._body) + len(chunk) <= BODY_BYTES:
                self._body += chunk
                return
            self._overflow = True
            self._body = (self._body + chunk)[-TAIL_BYTES:]
            return
        self._line += chunk
        if b"\n" not in chunk:
            self._check_line()
            return
        *lines, rest = self._line.split(b"\n")
        self._line = bytearray(rest)
        for line in lines:
            self._sse_line(bytes(line).rstrip(b"\r"))
        self._check_line()

    def finish(self) -> None:
        if self.event_stream:
            self._sse_line(bytes(self._line).rstrip(b"\r"))
            self._sse_line(b"")
        elif self._body and not self._overflow:
            self._take(self._body)
        elif self._overflow:  # a reply too long to keep (a large batch of embeddings): its usage from the tail
            found = list(USAGE_IN_TAIL.finditer(self._body))
            if found:
                self._take(b'{"%s": %s}' % (found[-1].group(1), found[-1].group(2)))

    @property
    def reply_text(self) -> str:
        return "".join(self.reply)

    def _check_line(self) -> None:
        if len(self._line) > LINE_BYTES:
            self._line.clear()
            self._overflow = True

    def _sse_line(self, line: bytes) -> None:
        if not line:
            if self._data:
                data, self._data = b"\n".join(self._data), []
                if data.strip() != b"[DONE]":
                    self._take(data)
        elif line.startswith(b"data:"):
            self._data.append(line[5:].lstrip(b" "))

    def _take(self, raw: bytes | bytearray) -> None:
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return
        self.usage.update(self.provider.usage(obj))
        self._add_reply(self.provider.reply(obj))

    def _add_reply(self, text: str) -> None:
        if not text or self.reply_cut:
            return
        room = REPLY_CHARS - self.reply_chars
        if len(text) > room:
            text, self.reply_cut = text[:room], True
        self.reply.append(text)
        self.reply_chars += len(text)


EVENT_END = re.compile(rb"\r?\n\r?\n")


class EventFilter:
    """A stream held back to whole events (they arrive whole: nothing waits in practice), less the
    events the provider says the gateway added itself: OpenAI's usage chunk, when the gateway asked
    for it and the client did not, so a client reading `choices[0]` of every chunk never meets it."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self._pending = b""

    def feed(self, data: bytes) -> bytes:
        self._pending += data
        start, kept = 0, []
        for end in EVENT_END.finditer(self._pending):
            event, start = self._pending[start:end.end()], end.end()
            if not self._added(event):
                kept.append(event)
        self._pending = self._pending[start:]
        if len(self._pending) > LINE_BYTES:  # not events after all: pass the bytes on as they are
            kept.append(self.flush())
        return b"".join(kept)

    def flush(self) -> bytes:
        pending, self._pending = self._pending, b""
        return pending

    def _added(self, event: bytes) -> bool:
        data = b"\n".join(line[5:].lstrip(b" ") for line in event.splitlines() if line.startswith(b"data:"))
        try:
            return self.provider.added_by_gateway(orjson.loads(data)) if data else False
        except orjson.JSONDecodeError:
            return False

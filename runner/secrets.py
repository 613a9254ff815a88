"""Secrets such as LLM API keys: encrypted at rest, decrypted only into a sandbox's environment.

The key comes from the environment (MEDALBOARD_SECRETS_KEY, a Fernet key:
`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`). In
DEBUG without one, a key is derived from SECRET_KEY so a laptop works out of the box; production
refuses to store or read a secret without its own key. A value is never rendered, serialized or
logged: pages and the API show secret names only.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from urllib.parse import quote

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class SecretError(Exception):
    """A secret cannot be stored or read; the message says why without the value."""


def _fernet() -> Fernet:
    key = getattr(settings, "RUNNER_SECRETS_FERNET_KEY", "")
    if not key:
        if not settings.DEBUG:
            raise ImproperlyConfigured("MEDALBOARD_SECRETS_KEY must be set to store or use secrets")
        digest = hashlib.sha256(b"medalboard-secrets\0" + settings.SECRET_KEY.encode()).digest()
        key = base64.urlsafe_b64encode(digest).decode()
    try:
        return Fernet(key)
    except (ValueError, TypeError):
        raise ImproperlyConfigured("MEDALBOARD_SECRETS_KEY is not a Fernet key (32 url-safe base64 bytes)") from None


def encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise SecretError("a stored secret cannot be decrypted with the current MEDALBOARD_SECRETS_KEY") from None


def seal(env: dict[str, str]) -> str:
    """A sandbox environment (names -> secret values) as one encrypted token, for a Job row."""
    return encrypt(json.dumps(env, sort_keys=True))


def unseal(token: str) -> dict[str, str]:
    """The environment `seal` stored; empty for an empty token. Only the runner calls this."""
    return json.loads(decrypt(token)) if token else {}


MIN_REDACTED_CHARS = 4  # shorter values would blank ordinary words; job creation refuses them
REPLACEMENT = b"[secret]"


def redact(text: str, env: dict[str, str]) -> str:
    """`text` with every secret value (and its common encodings) replaced, for errors and log tails."""
    return Redactor(env.values()).text(text)


class Redactor:
    """Replaces secret values in what is stored from a sandbox: each value as it is, and the
    encodings an agent's library would print it in by accident (URL-quoted, JSON-escaped, hex,
    base64 at any alignment, reversed). A deliberate agent can still disguise a value it was
    given; a key that must stay secret from the agent goes through the LLM gateway instead."""

    def __init__(self, values) -> None:
        patterns = {form for value in values if len(value) >= MIN_REDACTED_CHARS for form in _forms(value)}
        ordered = sorted(patterns, key=len, reverse=True)
        self.longest = len(ordered[0]) if ordered else 0
        self._forms = ordered
        self._pattern = re.compile(b"|".join(re.escape(p) for p in ordered)) if ordered else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def bytes(self, data: bytes) -> bytes:
        return self._pattern.sub(REPLACEMENT, data) if self._pattern is not None else data

    def text(self, text: str, *, cut_start: bool = False) -> str:
        """`text` redacted and storable (no lone surrogates); `cut_start`: it is the end of something
        longer (a log's tail), so it may begin with the rest of a value cut in two, replaced too."""
        data = text.encode("utf-8", "surrogateescape")  # a name's bytes that are not UTF-8 come back as U+FFFD
        if self._pattern is None:
            return data.decode("utf-8", "replace")
        data = self.bytes(data)
        return (self._cut_start(data) if cut_start else data).decode("utf-8", "replace")

    def stream(self, chunks, *, cut_start: bool = False, cut_end: bool = False) -> Iterator[bytes]:
        """The chunks redacted, values split across chunk boundaries included. `cut_start`/`cut_end`:
        the chunks are a part of something longer, cut there, so a value cut in two leaves a piece at
        that edge: a piece of MIN_REDACTED_CHARS or more is replaced too."""
        if self._pattern is None:
            yield from chunks
            return
        pieces = self._stream(chunks)
        if cut_start:
            pieces = self._start_edge(pieces)
        if cut_end:
            pieces = self._end_edge(pieces)
        yield from pieces

    def _stream(self, chunks) -> Iterator[bytes]:
        keep, carry = self.longest - 1, b""
        for chunk in chunks:
            buffer = self.bytes(carry + chunk)
            cut = max(0, len(buffer) - keep)
            carry = buffer[cut:]
            if cut:
                yield buffer[:cut]
        if carry:
            yield self.bytes(carry)

    def _start_edge(self, pieces: Iterator[bytes]) -> Iterator[bytes]:
        head = b""
        for piece in pieces:
            head += piece
            if len(head) >= self.longest:
                break
        if head:
            yield self._cut_start(head)
        yield from pieces

    def _end_edge(self, pieces: Iterator[bytes]) -> Iterator[bytes]:
        tail = b""
        for piece in pieces:
            tail += piece
            if len(tail) > 2 * self.longest:
                yield tail[:-self.longest]
                tail = tail[-self.longest:]
        if tail:
            yield self._cut_end(tail)

    def _cut_start(self, data: bytes) -> bytes:
        """`data` with the longest end of a value's form it begins with replaced."""
        found = self._edge(data, lambda form, n: data.startswith(form[-n:]))
        return REPLACEMENT + data[found:] if found else data

    def _cut_end(self, data: bytes) -> bytes:
        """`data` with the longest start of a value's form it ends with replaced."""
        found = self._edge(data, lambda form, n: data.endswith(form[:n]))
        return data[:-found] + REPLACEMENT if found else data

    def _edge(self, data: bytes, matches) -> int:
        """The longest length n (MIN_REDACTED_CHARS or more, shorter than the form) a form matches at an edge."""
        return max((n for form in self._forms for n in range(min(len(form), len(data) + 1) - 1,
                                                            MIN_REDACTED_CHARS - 1, -1)
                    if matches(form, n)), default=0)


def _forms(value: str) -> set[bytes]:
    raw = value.encode("utf-8")
    forms = {raw, raw[::-1], quote(value, safe="").encode(), json.dumps(value)[1:-1].encode(),
             raw.hex().encode(), raw.hex().upper().encode()}
    for pad in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * pad + raw).rstrip(b"=")
            start, end = (pad * 8 + 5) // 6, ((pad + len(raw)) * 8) // 6
            if end - start >= 6:
                forms.add(encoded[start:end])
    return {form for form in forms if len(form) >= MIN_REDACTED_CHARS}

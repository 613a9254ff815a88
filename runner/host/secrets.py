"""Secrets such as LLM API keys: encrypted at rest, decrypted only into a sandbox's environment.

The key comes from the environment (MEDALBOARD_SECRETS_KEY, a Fernet key:
`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`). In
DEBUG without one, a key is derived from SECRET_KEY so a laptop works out of the box; production
refuses to store or read a secret without its own key. A value is never rendered, serialized or
logged: pages and the API show secret names only.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

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
MAX_WINDOWS = 4096  # past this many anchors found in one chunk, the whole chunk is matched


def redact(text: str, env: dict[str, str]) -> str:
    """`text` with every secret value (and its common encodings) replaced, for errors and log tails."""
    return Redactor(env.values()).text(text)


class Redactor:
    """Replaces secret values in what is stored from a sandbox: each value as it is, and the
    encodings an agent's library would print it in by accident: URL-quoted with any safe set
    (quote, quote_plus, safe="": a character as itself or as %XX in either case, a space also as
    "+"), every byte percent-encoded, JSON-escaped, hex of its bytes (either case), base64 and
    URL-safe base64 at any alignment, unwrapped or line-wrapped (MIME's 76 characters, PEM's 64, any
    width of 2 * BASE64_BLOCK characters or more), and reversed; and any piece of MIN_BASE64_PIECE
    base64 characters or more of a base64 form wherever it stands (a wrapped form's lines with
    other lines between them).

    A large log is not run through one big regular expression (a few MiB/s): each encoding has
    literal anchors, at least one of which every match contains, looked for with bytes.find (at
    memory speed) in the data folded to lower case with base64's URL-safe characters (so one anchor
    serves both hex cases and both base64 alphabets), and only the windows around an anchor found
    are matched. A deliberate agent can still disguise a value it was given (any transformation of
    its own: XOR, a cipher, one character a line); a key that must stay secret from the agent goes
    through the LLM gateway instead (docs/security.md)."""

    def __init__(self, values) -> None:
        raws = {value.encode("utf-8") for value in values if len(value) >= MIN_REDACTED_CHARS}
        self._forms = sorted({form for raw in raws for form in _forms(raw)}, key=len, reverse=True)
        encodings = [encoding for raw in raws for encoding in _encodings(raw)]
        self.longest = max((e.longest for e in encodings), default=0)  # the most bytes one match spans
        self._anchors = sorted({anchor.translate(_FOLD) for e in encodings for anchor in e.anchors}, key=len,
                               reverse=True)
        patterns = sorted({e.pattern for e in encodings}, key=len, reverse=True)
        self._pattern = re.compile(b"|".join(patterns)) if patterns else None
        self._pieces = _Base64Pieces(raws)

    def __bool__(self) -> bool:
        return self._pattern is not None

    def bytes(self, data: bytes) -> bytes:
        if self._pattern is None:
            return data
        out, done = [], 0
        for start, end in self._windows(data):
            out += [data[done:start], self._pattern.sub(REPLACEMENT, data[start:end])]
            done = end
        return self._pieces.replace(b"".join([*out, data[done:]]) if out else data)

    def _windows(self, data: bytes) -> list[tuple[int, int]]:
        """The stretches of `data` around each anchor found, merged: every match lies inside one."""
        spans, folded = [], data.translate(_FOLD)  # byte for byte: offsets are the same
        for anchor in self._anchors:
            at = folded.find(anchor)
            while at != -1:
                if len(spans) > MAX_WINDOWS:  # anchors everywhere (a value of short pieces): match it all
                    return [(0, len(data))]
                spans.append((max(0, at - self.longest), at + len(anchor) + self.longest))
                at = folded.find(anchor, at + 1)
        merged: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

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
        """`data` with the longest end of a value's form it begins with replaced: line breaks in it
        allowed (a wrapped base64 form cut in its first line), after the rest of one cut in two."""
        done = 0
        for skip in {0, _BROKEN_START.match(data).end()}:
            head, offsets = _unbroken(data[skip:self.longest])
            found = self._edge(head, lambda form, n, head=head: head.startswith(form[-n:]))
            done = max(done, skip + offsets[found - 1] + 1 if found else 0)
        return REPLACEMENT + data[done:] if done else data

    def _cut_end(self, data: bytes) -> bytes:
        """`data` with the longest start of a value's form it ends with replaced (the same allowances)."""
        cut, keep = max(0, len(data) - self.longest), len(data)
        for end in {len(data), _BROKEN_END.search(data, cut).start()}:
            tail, offsets = _unbroken(data[cut:end])
            found = self._edge(tail, lambda form, n, tail=tail: tail.endswith(form[:n]))
            keep = min(keep, cut + offsets[len(tail) - found] if found else len(data))
        return data[:keep] + REPLACEMENT if keep < len(data) else data

    def _edge(self, data: bytes, matches) -> int:
        """The longest length n (MIN_REDACTED_CHARS or more, shorter than the form) a form matches at an edge."""
        return max((next((n for n in range(min(len(form), len(data) + 1) - 1, MIN_REDACTED_CHARS - 1, -1)
                          if matches(form, n)), 0) for form in self._forms), default=0)


MIN_BASE64_PIECE = 16  # base64 characters of a value's form standing alone that are replaced
PIECE_BLOCK = 8  # their anchors: a piece of 2 * PIECE_BLOCK - 1 characters or more holds a whole block


class _Base64Pieces:
    """Pieces of a value's base64 forms wherever they stand: the lines of a wrapped form with other
    lines between them (stdout and stderr interleaved line by line in one log), or a part of a
    form on its own. Each form's blocks of PIECE_BLOCK characters are the anchors; from an anchor
    found, the piece is grown character by character while it goes on matching the form (in either
    base64 alphabet), and replaced if it has MIN_BASE64_PIECE characters or more."""

    def __init__(self, raws) -> None:
        self._forms = [form for raw in raws for form, _ in _base64_forms(raw) if len(form) >= MIN_BASE64_PIECE]
        self._anchors: dict[bytes, list[tuple[int, int]]] = {}  # folded block -> (form, offset in it)
        for index, form in enumerate(self._forms):
            for offset in range(0, len(form) - PIECE_BLOCK + 1, PIECE_BLOCK):
                self._anchors.setdefault(form[offset:offset + PIECE_BLOCK].translate(_FOLD), []).append(
                    (index, offset))

    def replace(self, data: bytes) -> bytes:
        spans = self._spans(data) if self._anchors else []
        if not spans:
            return data
        out, done = [], 0
        for start, end in sorted(spans):
            if end <= done:
                continue
            out += [data[done:max(done, start)], REPLACEMENT if start >= done else b""]
            done = end
        return b"".join([*out, data[done:]])

    def _spans(self, data: bytes) -> list[tuple[int, int]]:
        """Found only in the runs of MIN_BASE64_PIECE base64 characters or more (one translate and a
        find per run, at memory speed), joined by a space, which no form holds."""
        runs = _base64_runs(data)
        if not runs:
            return []
        starts, joined, at = [], [], 0
        for start, end in runs:
            starts.append(at)
            joined.append(data[start:end])
            at += end - start + 1
        normal = b" ".join(joined).translate(_STANDARD)
        folded = normal.translate(_FOLD)
        spans = []
        for anchor, places in self._anchors.items():
            at, covered = folded.find(anchor), 0
            while at != -1:
                if at + PIECE_BLOCK > covered:  # not inside a piece this anchor already grew
                    for index, offset in places:
                        start, end = self._grow(normal, at, self._forms[index], offset)
                        if end - start >= MIN_BASE64_PIECE:
                            run = bisect.bisect_right(starts, start) - 1
                            shift = runs[run][0] - starts[run]
                            spans.append((start + shift, end + shift))
                            covered = max(covered, end)
                at = folded.find(anchor, at + 1)
        return spans

    @staticmethod
    def _grow(normal: bytes, at: int, form: bytes, offset: int) -> tuple[int, int]:
        """The longest stretch of `normal` around `at` that equals `form` around `offset`."""
        if normal[at:at + PIECE_BLOCK] != form[offset:offset + PIECE_BLOCK]:
            return at, at
        before = 0
        while before < min(at, offset) and normal[at - before - 1] == form[offset - before - 1]:
            before += 1
        after = PIECE_BLOCK
        while after < min(len(normal) - at, len(form) - offset) and normal[at + after] == form[offset + after]:
            after += 1
        return at - before, at + after


def _base64_runs(data: bytes) -> list[tuple[int, int]]:
    """Where `data` has MIN_BASE64_PIECE or more base64 characters (either alphabet) in a row."""
    marks, seed, runs = data.translate(_RUN_MARKS), b"a" * MIN_BASE64_PIECE, []
    at = marks.find(seed)
    while at != -1:  # a run starts here: the search starts after a character that is not base64
        end = marks.find(b" ", at + MIN_BASE64_PIECE)
        end = len(data) if end == -1 else end
        runs.append((at, end))
        at = marks.find(seed, end)
    return runs


def _unbroken(data: bytes) -> tuple[bytes, list[int]]:
    """`data` without its line breaks (as they are or escaped, as `_wrapped` allows them), and the
    offset in `data` of each byte kept."""
    kept, offsets, done = [], [], 0
    for match in _BREAK.finditer(data):
        kept.append(data[done:match.start()])
        offsets += range(done, match.start())
        done = match.end()
    kept.append(data[done:])
    offsets += range(done, len(data))
    return b"".join(kept), offsets


def _forms(raw: bytes) -> set[bytes]:
    """The value's usual encodings spelled out: the pieces `_edge` looks for where a log was cut."""
    value = raw.decode("utf-8")
    forms = {raw, value[::-1].encode(), quote(value, safe="").encode(), quote(value).encode(),
             quote_plus(value).encode(), json.dumps(value)[1:-1].encode(), raw.hex().encode(),
             raw.hex().upper().encode()}
    forms.update(encoded for encoded, _ in _base64_forms(raw, urlsafe=True))
    return {form for form in forms if len(form) >= MIN_REDACTED_CHARS}


BASE64_BLOCK = 32  # base64 anchors: line breaks 64 or more characters apart leave one of two blocks whole


@dataclass(frozen=True)
class _Encoding:
    pattern: bytes  # a regular expression
    anchors: tuple[bytes, ...]  # every match contains one of these
    longest: int  # the most bytes a match spans


def _encodings(raw: bytes) -> list[_Encoding]:
    """The value's encodings as patterns, each as general as one pattern can be, with its anchors."""
    value = raw.decode("utf-8")
    literals = {value[::-1].encode(), json.dumps(value)[1:-1].encode(), raw.hex().encode(), raw.hex().upper().encode(),
                "".join(f"%{b:02x}" for b in raw).encode(), "".join(f"%{b:02X}" for b in raw).encode()} - {raw}
    found = [_Encoding(re.escape(form), (form,), len(form)) for form in literals if len(form) >= MIN_REDACTED_CHARS]
    found.append(_quoted(raw))
    for encoded, _ in _base64_forms(raw):
        found.append(_wrapped(encoded))
    return found


def _quoted(raw: bytes) -> _Encoding:
    """The value as itself or URL-quoted with any safe set: quote never encodes letters, digits and
    "_.-~", so the longest run of those is an anchor (the value's first bytes if it has none)."""
    pattern = b"".join(re.escape(bytes([byte])) if byte in _UNRESERVED else _byte_or_percent(byte) for byte in raw)
    runs = re.findall(rb"[A-Za-z0-9_.~-]+", raw)
    anchor = max(runs, key=len) if runs else b""
    anchors = (anchor,) if anchor else tuple({b"%" + (b"%02X" % raw[0]), b"%" + (b"%02x" % raw[0]), raw[:1]})
    return _Encoding(pattern, anchors, 3 * len(raw))


def _wrapped(encoded: bytes) -> _Encoding:
    """A base64 form, standard or URL-safe, with a line break allowed after any character: \\n or
    \\r\\n, or either escaped as JSON or a repr write it, in layers (a repr of it in a JSON step)."""
    pattern = _LINE_BREAK.join(_BASE64_ALIKE.get(c, re.escape(bytes([c]))) for c in encoded)
    size = min(BASE64_BLOCK, len(encoded) // 2)
    blocks = [encoded[i:i + size] for i in range(0, len(encoded) - size + 1, size)]
    return _Encoding(pattern, tuple(blocks), 19 * len(encoded))  # a character and up to 18 of a break


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")
# a line break as it is, or escaped (JSON, a repr: each layer doubles the backslashes) up to 3 layers deep
_LINE_BREAK = rb"(?:\r?\n|(?:\\{1,8}r)?\\{1,8}n)?"
_BREAK = re.compile(_LINE_BREAK[:-1])  # one line break, not an empty one
_BROKEN_START = re.compile(rb"(?:\r?\n|\\{0,8}r?\\{0,8}n)?")  # what a line break cut in two leaves
_BROKEN_END = re.compile(rb"(?:\r|\\{1,8}(?:r\\{0,8})?)?\Z")
_BASE64_ALIKE = {ord("+"): rb"[+\-]", ord("/"): rb"[/_]", ord("-"): rb"[+\-]", ord("_"): rb"[/_]"}
_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ+/", b"abcdefghijklmnopqrstuvwxyz-_")
_STANDARD = bytes.maketrans(b"-_", b"+/")  # URL-safe base64 read as standard
_BASE64_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")
_RUN_MARKS = bytes(ord("a") if byte in _BASE64_CHARS else ord(" ") for byte in range(256))


def _byte_or_percent(byte: int) -> bytes:
    high, low = (b"[%s%s]" % (c.lower(), c.upper()) if c.isalpha() else c
                 for c in (b"%X" % (byte >> 4), b"%X" % (byte & 15)))
    alternatives = [re.escape(bytes([byte])), b"%" + high + low] + ([rb"\+"] if byte == ord(" ") else [])
    return b"(?:" + b"|".join(alternatives) + b")"


def _base64_forms(raw: bytes, *, urlsafe: bool = False) -> Iterator[tuple[bytes, int]]:
    """The base64 characters fully set by the value's bytes, at each of the three alignments it can
    start at in a longer encoded text (and URL-safe too if `urlsafe`), with the alignment."""
    for pad in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode)[:2 if urlsafe else 1]:
            encoded = encode(b"\0" * pad + raw).rstrip(b"=")
            start, end = (pad * 8 + 5) // 6, ((pad + len(raw)) * 8) // 6
            if end - start >= 6:
                yield encoded[start:end], pad

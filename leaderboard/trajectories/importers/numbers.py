"""JSON as Python writes it, made readable by the strict parsers the importers stream with.

Python's json module writes NaN, Infinity and -Infinity for non-finite floats and integers of any
size; an agent's journal or log holds them whenever a metric was NaN or a counter overflowed. ijson's
C backend (yajl) and orjson refuse all of them, and numbers past a double or a 64-bit integer too,
so one such value used to make the whole file "not a trajectory format" or its nodes unreadable.

Outside strings, each such value is replaced by `null` (what the importers make of a number no
column holds anyway: to_float / to_count give None). Files without any are read as they are: a scan
for the tokens (in C, by `re`) decides, so the common case costs one pass over the bytes.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import BinaryIO

INT64 = 2**63 - 1
CHUNK = 1 << 20
# Might need repair: the words, an integer of 19+ digits, an exponent of 3+ digits.
_SUSPECT = re.compile(rb"NaN|Infinity|\d{19}|[eE][+-]?\d{3}")
# A string (possibly cut off at the end of the buffer) or a bare word (number, literal).
_TOKEN = re.compile(rb'"(?:[^"\\]+|\\.|\\\Z)*"?|[-+.\w]+', re.S)
_STRING_REST = re.compile(rb'(?:[^"\\]+|\\.)*', re.S)  # a string's bytes after its opening quote
_INTEGER = re.compile(rb"-?\d+")


def needs_repair(data: bytes) -> bool:
    return _SUSPECT.search(data) is not None


def _value(word: bytes) -> bytes:
    """The word, or null for a number no double or 64-bit integer holds."""
    if word in (b"NaN", b"Infinity", b"-Infinity", b"+Infinity", b"-NaN"):
        return b"null"
    if not word[:1].isdigit() and word[:1] != b"-":
        return word  # true, false, null, or junk the parser reports as before
    try:
        if _INTEGER.fullmatch(word):
            return word if abs(int(word)) <= INT64 else b"null"
        number = float(word)
    except ValueError:
        return word
    return word if number - number == 0 else b"null"


def _repair(buffer: bytes, final: bool, in_string: bool = False) -> tuple[bytes, bytes, bool]:
    """(repaired bytes, the tail to read again with the next chunk, whether the next chunk starts
    inside a string). A chunk may end inside a string or a word: the string's bytes so far go out
    (all but a lone backslash), a word is held for the next chunk."""
    pieces, done = [], 0
    if in_string:
        inside = _STRING_REST.match(buffer)
        if inside.end() == len(buffer) or buffer[inside.end():inside.end() + 1] != b'"':
            if final:
                return buffer, b"", False  # a string the file never ends: the parser says so
            return buffer[:inside.end()], buffer[inside.end():], True  # still inside it
        done = inside.end() + 1
        pieces.append(buffer[:done])
    for match in _TOKEN.finditer(buffer, done):
        cut = not final and match.end() == len(buffer)
        if match.group()[:1] == b'"':
            if cut:
                inside = _STRING_REST.match(buffer, match.start() + 1)
                if inside.end() == len(buffer) or buffer[inside.end():inside.end() + 1] != b'"':
                    pieces.append(buffer[done:inside.end()])
                    return b"".join(pieces), buffer[inside.end():], True
            continue
        if cut:
            pieces.append(buffer[done:match.start()])
            return b"".join(pieces), buffer[match.start():], False
        word = match.group()
        value = _value(word)
        if value is not word:
            pieces += [buffer[done:match.start()], value]
            done = match.end()
    pieces.append(buffer[done:])
    return b"".join(pieces), b"", False


def repaired(data: bytes) -> bytes:
    """The JSON text with each non-finite or out-of-range number outside strings as null."""
    return _repair(data, final=True)[0] if needs_repair(data) else data


class _RepairingReader(io.RawIOBase):
    """A file read through _repair, chunk by chunk (a token cut by a chunk is held for the next)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw, self.pending, self.out, self.eof, self.in_string = raw, b"", b"", False, False

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        while not self.out and not self.eof:
            chunk = self.raw.read(CHUNK)
            self.eof = not chunk
            self.out, self.pending, self.in_string = _repair(self.pending + chunk, self.eof, self.in_string)
        n = min(len(target), len(self.out))
        target[:n], self.out = self.out[:n], self.out[n:]
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def open_json(path: Path) -> BinaryIO:
    """The file for a streaming parser: as it is, or repaired if any chunk holds a suspect token."""
    raw = open(path, "rb")  # noqa: SIM115 - the caller closes it
    return io.BufferedReader(_RepairingReader(raw), CHUNK) if _file_needs_repair(path, raw) else raw


_scanned: dict[tuple[str, int, int], bool] = {}  # an importer opens one file several times: scanned once


def _file_needs_repair(path: Path, f: BinaryIO) -> bool:
    info = os.fstat(f.fileno())
    key = (str(path), info.st_mtime_ns, info.st_size)
    if key not in _scanned:
        if len(_scanned) > 64:
            _scanned.clear()
        _scanned[key] = any(needs_repair(chunk) for chunk in _overlapping_chunks(f))
        f.seek(0)
    return _scanned[key]


def _overlapping_chunks(f: BinaryIO):
    """The file in chunks that overlap by 32 bytes, so a token across a boundary is seen whole."""
    tail = b""
    while chunk := f.read(CHUNK):
        yield tail + chunk
        tail = chunk[-32:]

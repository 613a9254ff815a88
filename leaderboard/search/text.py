"""What of a step is searched, and what a word is: the one definition the index, the engines' filter,
the exact check and the tests' brute-force scan all use."""

from __future__ import annotations

import re
from collections.abc import Iterator

TEXT_CHARS = 20_000  # searchable characters per step: the title, the text, then the data's strings
WORD_CHARS = 100  # a longer run of letters and digits (a hash, base64) is no word; quote it to find it
WORD = re.compile(r"[^\W_]+")  # letters and digits: `foo_bar` and `foo-bar` are two words each


def step_text(title: str, text: str, data) -> str:
    """The step's searchable text: title, text, and the string values of its data (code, output,
    arguments), one per line, cut at TEXT_CHARS."""
    parts = [title, text]
    if data:
        _strings(data, parts)
    joined = "\n".join(p for p in parts if p)
    if len(joined) <= TEXT_CHARS:  # nearly every step: no cut
        return joined
    kept, size = [], 0
    for part in parts:
        if part:
            kept.append(part[:TEXT_CHARS - size])
            size += len(kept[-1]) + 1
            if size >= TEXT_CHARS:
                break
    return "\n".join(kept)[:TEXT_CHARS]


def _strings(value, out: list) -> None:
    """Appends the string values of `value` to `out`, in order (into a list, not through generators:
    this runs for every step of every import)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("diff", "truncated"):  # a diff repeats the code; the cut note is the site's own
                _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)


def fold(text: str) -> str:
    """Lower case, one character for one, so positions in the folded text are positions in the text."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def words(folded: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, word) of each word of a folded text."""
    for match in WORD.finditer(folded):
        if match.end() - match.start() <= WORD_CHARS:
            yield match.start(), match.end(), match.group()


def word_set(folded: str) -> str:
    """The distinct words, space-separated, a word longer than WORD_CHARS cut to its first WORD_CHARS
    characters: what PostgreSQL's tsvector is built from, verbatim. A long word is no word to search
    for, but exact text may end inside one, so the index keeps its start for a prefix to find
    (engines.py).

    Runs for every step of an import on PostgreSQL, so the split is done in C: ASCII punctuation and
    spaces become spaces (bytes.translate) and the rest splits there. No word of WORD spans such a
    byte, so only a piece holding other characters (which may be letters or not) needs WORD."""
    pieces = set(folded.encode().translate(_ASCII_SPACES).split())
    if folded.isascii():  # bytes are characters: cut and join as bytes
        if max(map(len, pieces), default=0) > WORD_CHARS:
            pieces = {w[:WORD_CHARS] for w in pieces}
        return b" ".join(sorted(pieces)).decode()
    found = set()
    for piece in pieces:
        if piece.isascii():
            found.add(piece.decode())
        else:
            found.update(WORD.findall(piece.decode()))
    if max(map(len, found), default=0) > WORD_CHARS:
        found = {w[:WORD_CHARS] for w in found}
    return " ".join(sorted(found))


# Each ASCII byte that is not a letter or a digit (as WORD sees ASCII) becomes a space; the bytes of
# other characters stay as they are.
_ASCII_SPACES = bytes(c if c >= 0x80 or chr(c).isalnum() else 0x20 for c in range(256))

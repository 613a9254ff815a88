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
    parts, size = [], 0
    for part in (title, text, *_strings(data)):
        if part:
            parts.append(part[:TEXT_CHARS - size])
            size += len(parts[-1]) + 1
            if size >= TEXT_CHARS:
                break
    return "\n".join(parts)[:TEXT_CHARS]


def _strings(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("diff", "truncated"):  # a diff repeats the code; the cut note is the site's own
                yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


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
    """The distinct words, space-separated: what PostgreSQL's tsvector is built from, verbatim."""
    return " ".join(sorted({w for w in WORD.findall(folded) if len(w) <= WORD_CHARS}))

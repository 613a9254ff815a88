"""The index's split of a step's text into words (search.text.word_set, done in C for speed) gives
exactly the words the query's definition (the WORD pattern) finds, a long word cut to its start, on
ASCII, on any Unicode, and on the real trajectories; and step_text keeps its cut at TEXT_CHARS."""

from __future__ import annotations

import random

from leaderboard.search.text import TEXT_CHARS, WORD, WORD_CHARS, fold, step_text, word_set
from leaderboard.trajectories.importers import read_trajectories
from tests.conftest import TRAJECTORIES_DIR
from tests.search.test_search_equals_scan import REAL_FILES


def reference(folded: str) -> str:
    return " ".join(sorted({w[:WORD_CHARS] for w in WORD.findall(folded)}))


ALPHABET = [
    "a",
    "Z",
    "0",
    "9",
    "_",
    " ",
    "-",
    ".",
    "'",
    "\n",
    "\t",
    "\x1f",
    "é",
    "\u00a0",
    "\u201c",
    "ß",
    "\u0130",
    "\u212a",
    "日",
    "本",
    "\U0001f600",
    "\u0301",
    "\u0660",
    "\u00b2",
    "x",
    "X",
    "\x85",
]


def test_word_set_is_the_pattern_on_generated_text():
    rng = random.Random(7)
    texts = ["", " ", "x" * 150 + " é" + "y" * 120 + "日" * 130, "a" * 100, "a" * 101, "é" * 101 + " b"]
    texts += [
        "".join(rng.choice(ALPHABET) * rng.choice([1, 1, 1, 30, 120]) for _ in range(rng.randint(0, 60)))
        for _ in range(3000)
    ]
    for text in texts:
        assert word_set(fold(text)) == reference(fold(text)), repr(text)


def test_word_set_is_the_pattern_on_the_real_trajectories():
    checked = 0
    for name in REAL_FILES:
        for parsed in read_trajectories(TRAJECTORIES_DIR / name):
            for step in parsed.steps:
                folded = fold(step_text(step.title, step.text, step.data))
                assert word_set(folded) == reference(folded)
                checked += 1
    assert checked > 100


def test_step_text_cuts_where_it_always_did():
    def before(title, text, data):  # the definition as first written: each part cut to what is left
        parts, size = [], 0
        for part in (title, text, *strings(data)):
            if part:
                parts.append(part[: TEXT_CHARS - size])
                size += len(parts[-1]) + 1
                if size >= TEXT_CHARS:
                    break
        return "\n".join(parts)[:TEXT_CHARS]

    def strings(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for key, item in value.items():
                if key not in ("diff", "truncated"):
                    yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)

    n = TEXT_CHARS
    cases = [
        ("t", "x" * (n - 2), {}),
        ("t", "x" * (n - 3), {"a": "y"}),
        ("", "x" * (n - 1), {"a": ["y", "z"]}),
        ("t", "x", {"diff": "d" * n, "content": "c" * n, "truncated": "no"}),
        ("", "", {}),
        ("t", "", None),
        ("t" * n, "x", {"a": "b"}),
        ("t", "x" * (n - 4), {"a": ["", "yy", {"b": "z"}]}),
    ]
    for title, text, data in cases:
        assert step_text(title, text, data) == before(title, text, data)

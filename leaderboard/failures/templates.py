"""An error message as a template: what varies between two occurrences of the same error (numbers,
paths, ids, hex, quoted names) masked, so the same error from two runs reads the same."""

from __future__ import annotations

import re

MESSAGE_CHARS = 160

# Order matters: an id or a path holds numbers, a quoted path is a path.
MASKS = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<id>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.I), "<hex>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:[/\\][\w.@+-]+){2,}[/\\]?|\b[\w.-]+\.(?:py|csv|json|txt|pt|pth|"
                r"pkl|parquet|npy|npz|h5|jpg|png|zip|log|yaml|yml|ipynb|so)\b"), "<path>"),
    (re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\""), "<str>"),
    (re.compile(r"(?<![\w<])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w>])", re.I), "<n>"),
    (re.compile(r"\b(?=\w*\d)[A-Za-z_]*\d\w*\b"), "<id>"),  # words with digits: run7, gpu0, cuda:1's 1
]
SPACES = re.compile(r"\s+")


def template(message: str) -> str:
    """The first line of a message, masked and cut to MESSAGE_CHARS."""
    text = message.strip().split("\n", 1)[0] if message.strip() else ""
    for pattern, mask in MASKS:
        text = pattern.sub(mask, text)
    return SPACES.sub(" ", text).strip()[:MESSAGE_CHARS]

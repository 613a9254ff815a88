"""A hit's snippet: the text around its first match, every match in it marked, as escaped HTML. The
step text is the agent's, so each piece is escaped and only the <mark> tags are ours."""

from __future__ import annotations

from django.utils.html import escape

SNIPPET_CHARS = 300
LEAD = 80  # characters shown before the first match


def snippet(text: str, spans: list[tuple[int, int]]) -> tuple[str, str]:
    """(HTML with <mark>s, the same snippet as plain text)."""
    start = max(0, spans[0][0] - LEAD) if spans else 0
    end = min(len(text), start + SNIPPET_CHARS)
    html, at = [], start
    for a, b in _merged(spans):
        a, b = max(a, at), min(b, end)
        if a >= b:
            continue
        html += [escape(text[at:a]), "<mark>", escape(text[a:b]), "</mark>"]
        at = b
    html.append(escape(text[at:end]))
    before, after = ("…" if start else ""), ("…" if end < len(text) else "")
    return before + "".join(html) + after, before + text[start:end] + after


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged

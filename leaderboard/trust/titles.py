"""A check's title for people, from the checks' registry and the judge's questions."""

from __future__ import annotations

from leaderboard.trust.checks import registry
from leaderboard.trust.judge import QUESTIONS


def check_title(name: str) -> str:
    """A check's title for people ("Reads paths the agent must not"), or its name if none is registered."""
    if name in registry:
        return registry[name].title
    judged = {q.name: f"LLM judge: {q.summary.removeprefix('The LLM judge found ').rstrip('.')}" for q in QUESTIONS}
    return judged.get(name, name)

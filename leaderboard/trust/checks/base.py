"""The one interface every rule check implements, and what a check is given to look at.

A check sees a run's steps once, in order, beside every other check (the trajectory is read in one
pass however many checks there are, and a long trajectory is never held whole): `begin` with the
run's context, `see` for each step, `end` to say what it found (a `Hit`) or None. A check keeps only
the few step indexes it will name, never the steps.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from leaderboard.models import Run
from leaderboard.trajectories.store import StoredStep

# A finding names at most this many steps (the first ones): enough to follow, bounded on a page.
MAX_STEPS = 20
QUOTE_CHARS = 200


@dataclass(frozen=True)
class Hit:
    """What a check found on a run: one Finding (a check reports at most one per run)."""

    severity: str  # trust.models.Finding.Severity
    summary: str
    steps: list[int] = field(default_factory=list)
    evidence: dict = field(default_factory=dict)


class Context:
    """What a check may know of the run beyond its steps. Loaded lazily: a check that needs the
    competition's test data reads it once, the others never do."""

    def __init__(self, run: Run) -> None:
        self.run = run

    @functools.cached_property
    def job_task(self):
        """The runner's record of a job run (JobTask, reached by its relation: leaderboard does not
        import the runner), or None for uploads."""
        try:
            return self.run.job_task
        except Exception:  # noqa: BLE001 - RelatedObjectDoesNotExist, or no runner app
            return None

    @functools.cached_property
    def private_paths(self) -> list[str]:
        """The competition's registered private files (answers, gold submission) as the server knows
        them. Matched against what the agent did; never quoted (quote() masks them)."""
        answers = getattr(self.run.competition, "answers", None) if self.run.competition_id else None
        if answers is None:
            return []
        return [p for p in (answers.answers_path, answers.gold_submission_path) if p]

    def quote(self, text: str) -> str:
        return quote(text, self.private_paths)


class Check:
    """A rule check. Subclasses set `name` (stable: findings and the API name it), `title`, `rule`
    (the MLE-bench rule in a sentence) and implement `see` and `end`."""

    name: ClassVar[str]
    title: ClassVar[str]
    rule: ClassVar[str]

    def begin(self, context: Context) -> None:
        self.context = context

    def see(self, step: StoredStep) -> None:
        """One step, in order; the default ignores it (a check of the run's record alone)."""

    def end(self) -> Hit | None:
        raise NotImplementedError


registry: dict[str, type[Check]] = {}


def register(cls: type[Check]) -> type[Check]:
    registry[cls.name] = cls
    return cls


# --- what the agent did, and what came back ---------------------------------------------------------


def agent_text(step: StoredStep) -> str:
    """What the agent itself wrote in a step: a file's content, a command, a tool call's arguments.
    Plans and messages are the agent's words, not its acts; outputs are the environment's."""
    data = step.data if isinstance(step.data, dict) else {}
    if step.kind == "code":
        return _text(data.get("content")) or step.text
    if step.kind == "command":
        return _text(data.get("command")) or step.title
    if step.kind == "action":
        arguments = data.get("arguments")
        as_text = arguments if isinstance(arguments, str) else json.dumps(arguments, default=str) if arguments else ""
        return f"{_text(data.get('tool'))} {as_text}".strip() or step.text
    return ""


def output_text(step: StoredStep) -> str:
    """What came back to the agent: a command's output, an observation, an error."""
    data = step.data if isinstance(step.data, dict) else {}
    if step.kind == "command":
        return "\n".join(t for t in (_text(data.get("stdout")), _text(data.get("stderr")), step.text) if t)
    if step.kind in ("observation", "error"):
        return "\n".join(t for t in (step.text, _text(data.get("message")), _text(data.get("traceback"))) if t)
    return ""


def code_lines(text: str) -> list[str]:
    """Lines of code that do something: comment lines are left out, so a comment that names a rule
    ("never read /private") is not taken for breaking it."""
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith(("#", "//"))]


def _text(value) -> str:
    return value if isinstance(value, str) else ""


# --- quoting -----------------------------------------------------------------------------------------

# Keys an uploaded trajectory may hold (job runs are stored redacted by the runner already).
_KEYS = re.compile(
    r"(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}|hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}|(?i:bearer)\s+[A-Za-z0-9._\-]{16,}|AKIA[0-9A-Z]{16})")


def quote(text: str, private_paths: Sequence[str] = (), limit: int = QUOTE_CHARS) -> str:
    """A short quote of what the agent wrote, for a finding's evidence: one line, bounded, with
    anything that looks like a key masked and the server's private paths replaced by a name."""
    line = " ".join(text.split())
    for path in sorted(private_paths, key=len, reverse=True):
        line = line.replace(path, "<private answers path>")
    line = mask_keys(line)
    return line if len(line) <= limit else line[:limit - 1] + "…"


def mask_keys(text: str) -> str:
    return _KEYS.sub("<redacted>", text)


def first_steps(indexes: list[int]) -> list[int]:
    return sorted(set(indexes))[:MAX_STEPS]

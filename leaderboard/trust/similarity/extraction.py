"""The code a run wrote, read for fingerprinting: its code files (artifacts of kind `code`) and its
trajectory's code steps (an AIDE node's code is one), bounded.

Everything here is untrusted agent output, so it is read under a budget of bytes per run
(`SIMILARITY_MAX_BYTES`): files first (what the run says is its code), then the trajectory's code
steps, the best AIDE node first and then the latest first, since late versions are the solution and
early ones its drafts. Identical texts count once (AIDE repeats a node's code in its children).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from django.conf import settings

from leaderboard.models import Artifact, Run, StepKind
from leaderboard.trajectories.store import StoredTrajectory, outline_of


@dataclass(frozen=True)
class Source:
    """One text of a run's code and where it came from (a file, or a trajectory step to link to)."""

    label: str
    text: str
    step: int | None = None
    artifact: int | None = None


class Budget:
    def __init__(self, limit: int) -> None:
        self.left, self.seen = limit, set()

    def take(self, text: str) -> str | None:
        """The text (cut to what is left), or None when spent or already taken."""
        if self.left <= 0 or not text.strip():
            return None
        digest = hashlib.sha256(text.encode("utf-8", "replace")).digest()
        if digest in self.seen:
            return None
        self.seen.add(digest)
        raw = text.encode("utf-8", "replace")[: self.left]
        self.left -= len(raw)
        return raw.decode("utf-8", "ignore")


def code_of(run: Run, limit: int | None = None) -> list[Source]:
    """The run's code texts, at most `limit` bytes in all (default SIMILARITY_MAX_BYTES)."""
    budget = Budget(settings.SIMILARITY_MAX_BYTES if limit is None else limit)
    sources = list(_files(run, budget))
    return sources + list(_steps(run, budget))


def _files(run: Run, budget: Budget):
    for artifact in run.artifacts.filter(kind=Artifact.Kind.CODE).order_by("name", "pk"):
        if budget.left <= 0:
            return
        text = _read_text(artifact, budget.left)
        text = notebook_code(text) if artifact.name.lower().endswith(".ipynb") else text
        if text is not None and (taken := budget.take(text)) is not None:
            yield Source(artifact.name, taken, artifact=artifact.pk)


def _read_text(artifact: Artifact, limit: int) -> str | None:
    """The file's first `limit` bytes as text; None for a binary file or one storage lost."""
    try:
        with artifact.file.open("rb") as f:
            raw = f.read(limit)
    except OSError:
        return None
    if b"\x00" in raw:
        return None
    return raw.decode("utf-8", "replace")


def notebook_code(text: str | None) -> str | None:
    """A notebook's code cells, joined; the raw text when it is not a notebook we can read (cut by
    the budget, say), which still fingerprints as code and markup."""
    try:
        cells = json.loads(text or "").get("cells", [])
        return "\n".join("".join(c["source"]) if isinstance(c["source"], list) else str(c["source"])
                         for c in cells if isinstance(c, dict) and c.get("cell_type") == "code")
    except (ValueError, AttributeError, KeyError, TypeError):
        return text


def _steps(run: Run, budget: Budget):
    def read(stored: StoredTrajectory) -> list[Source]:
        found = []
        best = (outline_of(run).get("code") or {}).get("flagged") if stored.n_steps else None
        ordered = [stored.step(best)] if isinstance(best, int) else []
        for step in [*ordered, *stored.steps_before(stored.n_steps, kinds=[StepKind.CODE])]:
            if budget.left <= 0:
                break
            content = step.data.get("content") if step is not None else None
            if isinstance(content, str) and (taken := budget.take(content)) is not None:
                found.append(Source(f"step {step.index}: {step.data.get('file') or step.title}"[:200], taken,
                                    step=step.index))
        return found

    return StoredTrajectory.read(run, read)

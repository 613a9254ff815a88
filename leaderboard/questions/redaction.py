"""What the LLM summary shows the site's model of a run, and keeps of its reply: never a key, never a
competition's private answers (their path, or a line quoting one of their rows), as the judge's
answers (trust.checks: mask_keys, without_answer_rows)."""

from __future__ import annotations

from leaderboard.models import Run
from leaderboard.trust.checks.base import mask_keys
from leaderboard.trust.checks.test_data import answers_path, without_answer_rows

PRIVATE_PATH = "<private answers path>"


def redact(text: str, run: Run) -> str:
    """The text with keys masked, the answers' path named, and lines quoting their rows left out."""
    path = answers_path(run)
    if not path:
        return mask_keys(text)
    return mask_keys(without_answer_rows(text, [path]).replace(path, PRIVATE_PATH))

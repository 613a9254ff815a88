"""Test data copied into the agent's code: rows of the competition's test set, or of its private
answers, written literally into a code step. Rows of the public test set in training code mean the
agent is training on, or hand-mapping, the rows it is scored on; rows of the answers mean the answers
reached the agent at all. Rows are compared whole (stripped of quotes and brackets), so a number or an
id on its own never counts; the answers' rows are only counted, never quoted."""

from __future__ import annotations

import csv
import functools
import io
from pathlib import Path

from leaderboard.trust.checks.base import Check, Hit, code_lines, first_steps, register

MIN_ROWS = 5  # distinct rows matched before it counts: one row can be a coincidence or an example
READ_BYTES = 64 << 20  # of each file: enough to hold the rows of most test sets, bounded for the rest
MIN_ROW_CHARS = 6


@register
class TestDataInCode(Check):
    name = "test-data-in-code"
    title = "Test data copied into code"
    rule = "Training code reads the training data; the test set's rows and labels are never pasted into it."

    def begin(self, context) -> None:
        super().begin(context)
        self.test_hits: dict[str, int] = {}
        self.answer_hits: dict[str, int] = {}
        self.has_code = False

    def see(self, step) -> None:
        if step.kind != "code":
            return
        content = (step.data or {}).get("content") if isinstance(step.data, dict) else None
        lines = code_lines(content if isinstance(content, str) else step.text)
        if not lines:
            return
        test_rows, answer_rows = self.rows
        if not test_rows and not answer_rows:
            return
        for line in lines:
            row = normalise(line)
            if len(row) < MIN_ROW_CHARS or "," not in row:
                continue
            if row in answer_rows:
                self.answer_hits.setdefault(row, step.index)
            elif row in test_rows:
                self.test_hits.setdefault(row, step.index)

    @functools.cached_property
    def rows(self) -> tuple[frozenset[str], frozenset[str]]:
        competition = self.context.run.competition
        if competition is None:
            return frozenset(), frozenset()
        public = Path(competition.public_data_dir) / "test.csv" if competition.public_data_dir else None
        answers = self.context.private_paths[:1]
        return file_rows(public), file_rows(Path(answers[0]) if answers else None)

    def end(self) -> Hit | None:
        if len(self.answer_hits) >= MIN_ROWS:
            return Hit("violation", f"{len(self.answer_hits)} rows of the competition's private answers appear "
                                    "in the agent's code.", first_steps(list(self.answer_hits.values())),
                       {"answer_rows": len(self.answer_hits)})
        if len(self.test_hits) >= MIN_ROWS:
            return Hit("warning", f"{len(self.test_hits)} rows of the test set are written into the agent's code.",
                       first_steps(list(self.test_hits.values())), {"test_rows": len(self.test_hits)})
        return None


def normalise(line: str) -> str:
    """A row as written in code or in a CSV: whitespace, quotes, brackets and a trailing comma dropped."""
    text = line.strip().rstrip(",").strip("()[]{}'\"` \t")
    text = text[:-2] if text.endswith("\\n") else text  # "1,0.5\n" inside a string literal
    return ",".join(cell.strip().strip("'\"") for cell in next(csv.reader([text]), []))


def file_rows(path: Path | None) -> frozenset[str]:
    """The data rows (header left out) of a CSV file, read within READ_BYTES; empty if unreadable."""
    if path is None or not path.is_file():
        return frozenset()
    try:
        with path.open("rb") as f:
            raw = f.read(READ_BYTES)
    except OSError:
        return frozenset()
    text = raw.decode("utf-8", errors="replace")
    lines = text.splitlines()[1:]
    if len(raw) == READ_BYTES and lines:
        lines = lines[:-1]  # a row cut by the limit
    rows = (normalise(line) for line in io.StringIO("\n".join(lines)))
    return frozenset(r for r in rows if len(r) >= MIN_ROW_CHARS and "," in r)


def answers_path(run) -> str:
    """The run's competition's private answers file, "" when none is registered."""
    return getattr(getattr(run.competition, "answers", None), "answers_path", "") or ""


def without_answer_rows(text: str, private: list[str]) -> str:
    """The text less any line quoting a row of the answers (a log may show them, had an uploaded agent
    printed the file): what the site's model answers, or is shown, never carries the answers' contents."""
    rows = file_rows(Path(private[0])) if private else frozenset()
    if not rows:
        return text
    return "\n".join(line if not any(row in normalise(line) or row in line for row in rows)
                     else "[a line quoting the answers, left out]" for line in text.splitlines())

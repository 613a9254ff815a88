"""Counts of failed runs per signature, for an experiment's or a competition's runs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from leaderboard.failures.signatures import signatures
from leaderboard.models import Run

RUN_LINKS = 12  # runs linked per signature on a page
# What deciding a run's signature reads of it (Run.state, the grader's reason)
FAILURE_FIELDS = ("id", "status", "verification", "score", "submission_exists", "valid_submission", "competition_id",
                  "grading_error")


@dataclass
class Row:
    label: str
    count: int = 0
    runs: list[tuple[int, int | None]] = field(default_factory=list)  # (run id, error step) of the first few


@dataclass
class Breakdown:
    rows: list[Row]
    failed: int
    graded: int


def breakdown(runs: list[Run]) -> Breakdown:
    found = signatures(runs)
    rows: dict[str, Row] = defaultdict(lambda: Row(""))
    for run_id, signature in sorted(found.items()):
        row = rows[signature.label]
        row.label, row.count = signature.label, row.count + 1
        if len(row.runs) < RUN_LINKS:
            row.runs.append((run_id, signature.step))
    ordered = sorted(rows.values(), key=lambda r: (-r.count, r.label))
    return Breakdown(ordered, len(found), sum(1 for r in runs if r.status == Run.Status.GRADED))

"""What leaves the site as a file: a run's trajectory in our JSONL format, and CSV cells made safe.

A run's trajectory in Medalboard's own JSONL format (docs/trajectory-format.md), streamed.

Researchers publish full trajectories, not only grading reports: this is the file to share. It holds
what the run page shows (header, then one line per step) and nothing else: no grading report, no
answers. Importing it again gives the same steps.
"""

from __future__ import annotations

from collections.abc import Iterator

from leaderboard.models import Run
from leaderboard.trajectories.importers.jsonl import header_line
from leaderboard.trajectories.store import StoredTrajectory

CHUNK = 1 << 20
# A spreadsheet runs a cell that starts with one of these as a formula (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """Text that a spreadsheet would read as a formula gets a leading apostrophe; the rest is kept."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def header_of(run: Run) -> dict:
    return {
        "task": run.competition.slug if run.competition_id else run.task_name,
        "agent": run.experiment.agent.name,
        "agent_version": run.experiment.agent.version,
        "model": run.experiment.model.name,
        "hardware": run.experiment.hardware,
        "seed": run.seed,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "duration_s": run.duration_s,
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
        "cost_usd": run.cost_usd,
        "usage": "metered" if run.usage_metered else "reported",
        "source": {"run": run.pk, "format": run.trajectory_format or None},
    }


def trajectory_lines(run: Run) -> Iterator[bytes]:
    """The header line, then the stored step file as it is (one step per line), in 1 MB chunks."""
    yield header_line({k: v for k, v in header_of(run).items() if v not in (None, "")})
    yield from StoredTrajectory.of(run).raw_chunks(CHUNK)

"""MLE-bench's published leaderboard (its README), read in place from the catalogue folder.

These are the authors' self-reported numbers, not runs graded here: pages show them in their own,
clearly labelled section and never mix them into the verified leaderboard.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

SPLIT_COLUMNS = {"lite": "low", "low": "low", "medium": "medium", "high": "high", "all": "all", "split75": "all"}


@dataclass(frozen=True)
class PublishedResult:
    agent: str
    llm: str
    pct: float | None
    sem: float | None
    hours: str
    date: str
    padded_incomplete_seeds: bool
    known_leakage: bool


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def published_results(split: str = "all", path: Path | None = None) -> list[PublishedResult]:
    """Rows for one split (lite/low, medium, high, all), best first; [] when the file is absent."""
    path = path or Path(settings.CATALOGUE_DIR) / "published-results.csv"
    column = SPLIT_COLUMNS.get(split, "all")
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as handle:
        rows = [
            PublishedResult(
                agent=row["agent"], llm=row["llm"], pct=_float(row.get(f"{column}_pct")),
                sem=_float(row.get(f"{column}_sem")), hours=row.get("hours", ""), date=row.get("date", ""),
                padded_incomplete_seeds=row.get("padded_incomplete_seeds", "").lower() == "true",
                known_leakage=row.get("known_leakage", "").lower() == "true",
            )
            for row in csv.DictReader(handle)
        ]
    return sorted(rows, key=lambda r: -(r.pct if r.pct is not None else -1))

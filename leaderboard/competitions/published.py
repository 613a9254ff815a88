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
COLUMNS = (("low", "Low (Lite)"), ("medium", "Medium"), ("high", "High"), ("all", "All 75"))


@dataclass(frozen=True)
class PublishedResult:
    agent: str
    llm: str
    by_split: dict  # column ("low", "medium", "high", "all") -> (pct, sem), either None where not reported
    hours: str
    date: str
    padded_incomplete_seeds: bool
    known_leakage: bool
    url: str = ""  # the entry's paper or code, where the catalogue has one

    def cells(self) -> list[tuple[str, float | None, float | None]]:
        return [(column, *self.by_split[column]) for column, _ in COLUMNS]


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def split_column(split: str) -> str | None:
    """The published column of a split; None for splits MLE-bench publishes no figures for (dev, ...)."""
    return SPLIT_COLUMNS.get(split)


def stamp(path: Path | None = None) -> tuple[int, int] | None:
    """The published results file's modification time and size (None: absent), so what is cached
    from it is keyed by the file it came from."""
    try:
        found = (path or Path(settings.CATALOGUE_DIR) / "published-results.csv").stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def published_results(split: str = "all", path: Path | None = None) -> list[PublishedResult]:
    """Every entry with its Low/Medium/High/All figures, best first on the split's column (All for a
    split without published figures); [] when the file is absent."""
    path = path or Path(settings.CATALOGUE_DIR) / "published-results.csv"
    column = split_column(split) or "all"
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as handle:
        rows = [
            PublishedResult(
                agent=row["agent"], llm=row["llm"],
                by_split={c: (_float(row.get(f"{c}_pct")), _float(row.get(f"{c}_sem"))) for c, _ in COLUMNS},
                hours=row.get("hours", ""), date=row.get("date", ""),
                padded_incomplete_seeds=row.get("padded_incomplete_seeds", "").lower() == "true",
                known_leakage=row.get("known_leakage", "").lower() == "true",
                url=_link(row.get("url") or row.get("paper") or row.get("code") or ""),
            )
            for row in csv.DictReader(handle)
        ]
    return sorted(rows, key=lambda r: -(r.by_split[column][0] if r.by_split[column][0] is not None else -1))


def _link(text: str) -> str:
    return text if text.startswith(("https://", "http://")) else ""

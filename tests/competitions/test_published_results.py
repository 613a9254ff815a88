"""MLE-bench's published results: Low/Medium/High/All side by side on every split, sorted by the
split shown, and never presented as figures of a split MLE-bench did not publish (dev, demo...)."""

from __future__ import annotations

import csv
import re

from django.conf import settings

from leaderboard.competitions import published

CSV = settings.CATALOGUE_DIR / "published-results.csv"


def expected_rows() -> list[dict]:
    with CSV.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_every_split_column_is_read_as_published():
    rows = {(r.agent, r.llm, r.hours, r.date): r for r in published.published_results("lite")}
    assert len(rows) == len(expected_rows())
    for row in expected_rows():
        entry = rows[row["agent"], row["llm"], row["hours"], row["date"]]
        for column, _ in published.COLUMNS:
            pct = float(row[f"{column}_pct"]) if row[f"{column}_pct"] else None
            assert entry.by_split[column][0] == pct


def test_sorted_by_the_split_shown():
    for split, column in (("lite", "low"), ("medium", "medium"), ("high", "high"), ("dev", "all")):
        values = [r.by_split[column][0] for r in published.published_results(split)]
        known = [v for v in values if v is not None]
        assert known == sorted(known, reverse=True), split


def test_the_page_shows_four_columns_on_any_split(client, catalogue):
    for split in ("lite", "dev", "spaceship-titanic"):
        html = client.get(f"/?split={split}").content.decode()
        section = html[html.index('id="published-results"'):]
        section = section[:section.index("</section>")]
        assert all(f"{label} %</th>" in section for _, label in published.COLUMNS), split
        row = expected_rows()[0]  # Disarray: 90.91 / 72.81 / 71.11 / 77.78
        for column, _ in published.COLUMNS:
            assert f'data-split="{column}">{float(row[f"{column}_pct"]):.2f}' in section
    dev = client.get("/?split=dev").content.decode()
    assert "MLE-bench\n  publishes no figures for" in dev
    lite = client.get("/?split=lite").content.decode()
    assert len(re.findall(r'<th class="num current-split">Low \(Lite\) %</th>', lite)) == 1

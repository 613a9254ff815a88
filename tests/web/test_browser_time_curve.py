"""The time curve of a 2-minute job in Chromium: an axis in seconds from 0, a marker at every budget, the
legend's time limit in words, and points with snapshots still to grade drawn hollow and explained."""

from __future__ import annotations

import pytest

from leaderboard.models import Run, Snapshot
from tests.analysis.test_scaling_short_runs import short_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _chart(page) -> dict:
    page.wait_for_selector("#scaling-chart[data-drawn='true']", timeout=15000)
    return page.evaluate("""() => {
      const el = document.getElementById('scaling-chart'), line = el.data.at(-1);
      return {x: line.x, y: line.y, symbols: line.marker.symbol, name: line.name,
              title: el.layout.xaxis.title.text, range: el._fullLayout.xaxis.range};
    }""")


def test_short_runs_are_drawn_in_seconds(page, catalogue):
    short_world(with_snapshots=True)
    page.goto(page.base_url + "/scaling/time/?split=short-test")
    chart = _chart(page)
    assert chart["title"] == "time budget (seconds)"
    assert [round(x, 6) for x in chart["x"]] == [10, 30, 120]  # the snapshots, then the time limit
    assert all(y is not None for y in chart["y"]) and chart["range"][0] <= 0 < chart["range"][1]
    assert "2 min" in chart["name"] and "0.0333" not in chart["name"]
    assert page.locator("#scaling-chart .scatterlayer .point").count() >= len(chart["x"])
    assert page.locator("#scaling-incomplete").is_hidden()


def test_points_with_ungraded_snapshots_are_marked_incomplete(page, catalogue):
    experiment = short_world(with_snapshots=True)
    run = Run.objects.filter(experiment=experiment).order_by("id").first()
    Snapshot.objects.create(run=run, elapsed_seconds=20.0, status="pending", any_medal=True)
    page.goto(page.base_url + "/scaling/time/?split=short-test")
    chart = _chart(page)
    assert chart["symbols"][0] == "circle" and set(chart["symbols"][1:]) == {"circle-open"}
    note = page.locator("#scaling-incomplete")
    assert note.is_visible() and "incomplete" in note.inner_text() and "count as no medal" in note.inner_text()


def test_pages_write_durations_in_the_browser_as_the_server_does(page):
    """static/js/durations.js (legends, job and run pages' elapsed times) against leaderboard.lib.durations."""
    from leaderboard.lib.durations import format_seconds

    seconds = [0.25, 5, 59.4, 59.6, 60, 90, 120, 3599, 3599.6, 3600, 5400, 86400, 90000, -1, None]
    page.goto(page.base_url + "/competitions/")
    written = page.evaluate("(values) => values.map((s) => window.medalboardDuration(s))", seconds)
    assert written == [format_seconds(s) for s in seconds]

"""The competition page draws its human-leaderboard chart in a real browser."""

import pytest

pytestmark = pytest.mark.browser


def test_competition_chart_is_drawn(page):
    page.goto(f"{page.base_url}/competitions/spaceship-titanic/")
    chart = page.locator("#human-leaderboard-chart")
    chart.locator("svg.main-svg").first.wait_for(timeout=15000)
    assert chart.get_attribute("data-drawn") == "true"
    assert page.locator("#human-leaderboard-chart .bars path, #human-leaderboard-chart .trace.bars").count() > 0
    legend_text = chart.inner_text()
    assert "gold" in legend_text and "median" in legend_text
    assert page.js_errors == []


def test_competition_list_filters_in_browser(page):
    page.goto(f"{page.base_url}/competitions/")
    page.select_option("select[name=split]", "low")
    page.wait_for_url("**split=low**")
    assert "22 competitions" in page.inner_text(".filters")

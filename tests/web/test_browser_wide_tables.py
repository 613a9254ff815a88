"""Wide tables: at 1440 px the leaderboard shows every column, its last one ("Grading", after
"Tokens / run") inside the table's box, even with long names, costs and token counts; a table wider than its box (the
leaderboard when narrower, the scaling numbers) says it scrolls."""

from __future__ import annotations

import pytest

from leaderboard.analysis.aggregates import maintenance
from leaderboard.models import Agent, Experiment, LanguageModel, Run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def wide_rows(catalogue):
    competitions = list(catalogue.filter(splits__slug="low"))
    names = [("OpenHands-CodeActAgent-v2.1-with-a-very-long-name", "claude-3-5-sonnet-20241022-extended-thinking"),
             ("averyveryverylongagentnamewithoutanyplacetobreakit", "gpt-4o-2024-08-06")]
    for agent, model in names:
        experiment = Experiment.objects.create(
            agent=Agent.objects.create(name=agent), model=LanguageModel.objects.create(name=model),
            hardware="8x NVIDIA H100 80GB HBM3, 96 vCPU, 1 TB RAM", time_limit_hours=24)
        for seed in range(3):
            Run.objects.bulk_create(Run(
                experiment=experiment, competition=c, seed=seed, status="graded", score=0.9, valid_submission=True,
                any_medal=seed == 0, gold_medal=seed == 0, cost_usd=1234.56, tokens_in=123_456_789,
                tokens_out=98_765_432, verification="verified") for c in competitions)
    maintenance.rebuild()  # bulk_create skips Run.save, which keeps the aggregates


def _right_edges(page) -> dict:
    return page.evaluate("""() => {
      const box = document.querySelector('#leaderboard').parentElement.getBoundingClientRect();
      const cells = Array.from(document.querySelectorAll('#leaderboard thead th'));
      return {box: box.right, last: cells.at(-1).getBoundingClientRect().right,
              tokens: cells.find(c => c.textContent.includes('Tokens')).getBoundingClientRect().right,
              viewport: window.innerWidth};
    }""")


def test_every_column_fits_at_1440(page, wide_rows):
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(page.base_url + "/?split=lite")
    assert page.locator("#leaderboard tbody tr").count() >= 2
    edges = _right_edges(page)
    assert edges["tokens"] <= edges["box"] + 0.5 and edges["last"] <= edges["box"] + 0.5, edges
    assert edges["box"] <= edges["viewport"]
    assert page.locator(".scroll-hint").count() == 0


def test_a_narrow_window_says_the_table_scrolls(page, wide_rows):
    page.set_viewport_size({"width": 900, "height": 900})
    page.goto(page.base_url + "/?split=lite")
    assert page.locator(".scroll-hint").first.is_visible()


def test_the_scaling_numbers_table_says_it_scrolls(page, catalogue):
    from tests.analysis.test_scaling_short_runs import short_world

    short_world(with_snapshots=True)
    page.set_viewport_size({"width": 1024, "height": 900})
    page.goto(page.base_url + "/scaling/time/?split=short-test")
    page.wait_for_selector("#scaling-chart[data-drawn='true']", timeout=15000)
    box = page.evaluate("(() => { const b = document.querySelector('#scaling-table').parentElement;"
                        " return [b.scrollWidth, b.clientWidth]; })()")
    assert box[0] > box[1]  # the table is wider than its box here
    assert page.locator(".scroll-hint").first.is_visible()

"""In Chromium: the runs index (filter, sort, page, pick two to compare) and
the competition page's list of its runs, best first."""

from __future__ import annotations

import pytest

from leaderboard.models import Competition, Run
from tests.web.test_leaderboard import experiment
from tests.web.test_replay_page import make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def runs(catalogue):
    titanic = Competition.objects.get(slug="spaceship-titanic")
    made = [make_run(competition=titanic, status=Run.Status.GRADED, score=s, submission_exists=True,
                     valid_submission=True, seed=i, human_rank=r)
            for i, (s, r) in enumerate([(0.70, 900), (0.81, 40), (0.78, 300)])]
    made[1].experiment = experiment("mlab", "claude")
    made[1].save()
    return made


def test_item7_the_runs_index_filters_sorts_and_picks_two_to_compare(page, runs):
    page.goto(f"{page.base_url}/")
    page.click("#site-nav a:has-text('Runs')")
    page.wait_for_url("**/runs/")
    page.fill("input[name=model]", "claude")
    page.click("#runs-filters button[type=submit]")
    assert page.locator("#runs-table tbody tr").count() == 1
    page.goto(f"{page.base_url}/runs/?competition=spaceship-titanic&sort=best")
    first_cells = page.locator("#runs-table tbody tr td:nth-child(2)").all_inner_texts()
    assert first_cells == [f"run {runs[1].pk}", f"run {runs[2].pk}", f"run {runs[0].pk}"]
    assert page.locator("#compare-submit").is_disabled()
    page.check(f"input[name=runs][value='{runs[0].pk}']")
    page.check(f"input[name=runs][value='{runs[1].pk}']")
    assert page.locator(f"input[name=runs][value='{runs[2].pk}']").is_disabled()  # two at most
    page.click("#compare-submit")
    page.wait_for_selector("h1:has-text('Compare runs')")
    assert sorted(page.url.split("runs=")[1].split("%2C")) == sorted([str(runs[0].pk), str(runs[1].pk)])
    assert page.locator("h1").inner_text() == "Compare runs"
    page.goto(f"{page.base_url}/compare/")
    assert page.locator("#compare-notice").is_visible() and page.locator("#compare-picker").is_visible()
    assert not page.js_errors


def test_item8_the_competition_page_lists_its_runs_best_first(page, runs):
    page.goto(f"{page.base_url}/competitions/spaceship-titanic/")
    rows = page.locator("#competition-runs tbody tr")
    assert rows.count() == 3
    assert rows.nth(0).locator("td").nth(1).inner_text() == f"run {runs[1].pk}"
    assert "mlab · claude" in rows.nth(0).inner_text() and "40" in rows.nth(0).locator("td").nth(6).inner_text()
    assert rows.nth(0).locator(".medal").count() == 1
    page.click("#competition-runs a:has-text('All runs on spaceship-titanic')")
    page.wait_for_url("**/runs/?competition=spaceship-titanic&sort=best")
    assert page.locator("#runs-table tbody tr").count() == 3

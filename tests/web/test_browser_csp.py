"""Under the site's Content-Security-Policy every page still works in a real browser: charts draw,
the split selector submits, the API docs load, and the browser reports no violation."""

from __future__ import annotations

import pytest

from tests.runs.test_submission import submit

pytestmark = pytest.mark.browser


@pytest.fixture
def page(browser, live_server, catalogue):
    """A tab that obeys the Content-Security-Policy (the shared `page` fixture bypasses it)."""
    context = browser.new_context()
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.base_url, tab.js_errors = live_server.url, errors
    yield tab
    context.close()


def _violations(page) -> list[str]:
    found: list[str] = []
    page.on("console", lambda message: found.append(message.text)
            if "Content Security Policy" in message.text else None)
    return found


def test_charts_and_selectors_work_under_the_policy(page):
    violations = _violations(page)
    page.goto(f"{page.base_url}/competitions/spaceship-titanic/")
    page.locator("#human-leaderboard-chart svg.main-svg").first.wait_for(timeout=15000)
    page.goto(f"{page.base_url}/competitions/")
    page.select_option("select[name=split]", "low")
    page.wait_for_url("**split=low**")
    page.goto(f"{page.base_url}/")
    page.select_option("select[name=split]", "medium")
    page.wait_for_url("**split=medium**")
    assert violations == [] and page.js_errors == []


def test_run_page_and_api_docs_load_under_the_policy(page, django_user_model):
    user = django_user_model.objects.create_user("carol", "c@example.org", "carol-password-1")
    run = submit(user, self_reported_score=0.5, submission=None)
    violations = _violations(page)
    page.goto(f"{page.base_url}/runs/{run.pk}/")
    page.wait_for_load_state("networkidle")
    page.goto(f"{page.base_url}/api/docs/")
    page.locator(".swagger-ui .info").first.wait_for(timeout=15000)
    assert violations == [] and page.js_errors == []

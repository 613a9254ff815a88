"""The scaling pages in Chromium: a filter change redraws the chart and puts the filters in the URL;
static exports open from file:// with every network request refused and draw their charts."""

from __future__ import annotations

import pytest

from leaderboard.models import Run
from tests.analysis.test_scaling_curves import make_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(page, django_user_model):
    owner = django_user_model.objects.create_user("carol", "carol@example.org", "carol-password-1")
    return make_world(owner)


def _drawn(page, revision: int) -> None:
    page.wait_for_function(f"Number(document.getElementById('scaling-chart').dataset.revision) > {revision}",
                           timeout=15000)


def _revision(page) -> int:
    return int(page.get_attribute("#scaling-chart", "data-revision"))


def _trace_names(page) -> list[str]:
    return page.evaluate("document.getElementById('scaling-chart').data.map(t => t.name).filter(Boolean)")


@pytest.mark.parametrize("kind, field, value, expected", [
    ("time", "input[name=hours]", "2,24", "hours=2%2C24"),
    ("pass-at-k", "input[name=agent]", "synthetic-b", "agent=synthetic-b"),
    ("hardware", "input[name=hardware]", "A100", "hardware=A100"),
])
def test_a_filter_change_redraws_the_chart_and_updates_the_url(page, world, kind, field, value, expected):
    page.goto(f"{page.base_url}/scaling/{kind}/?split=tiny-test")
    _drawn(page, 0)
    before, names_before = _revision(page), _trace_names(page)
    assert page.locator("#scaling-chart svg.main-svg").count() > 0
    page.fill(field, value)
    page.dispatch_event(field, "change")
    _drawn(page, before)
    assert expected in page.url and "split=tiny-test" in page.url
    assert expected in page.get_attribute("#scaling-csv", "href") and "format=csv" in page.get_attribute(
        "#scaling-csv", "href")
    after = _trace_names(page)
    if kind == "time":
        assert page.evaluate("document.getElementById('scaling-chart').data.at(-1).x") == [2, 24]
    elif kind == "pass-at-k":
        assert after and all("synthetic-b" in name for name in after) and after != names_before
    else:
        xs = page.evaluate("document.getElementById('scaling-chart').data.flatMap(t => t.x[1])")
        assert xs and all("A100" in x for x in xs) and len(xs) < 5
    rows = page.locator("#scaling-table tbody tr").count()
    assert rows > 0
    assert page.js_errors == []


def _offline_context(browser):
    context = browser.new_context(offline=True)
    blocked: list[str] = []

    def refuse(route):
        blocked.append(route.request.url)
        route.abort()

    context.route(lambda url: not url.startswith("file:"), refuse)
    return context, blocked


@pytest.mark.parametrize("path, chart", [
    ("/scaling/time/?split=tiny-test&export=html", "#scaling-chart"),
    ("/scaling/pass-at-k/?split=tiny-test&export=html", "#scaling-chart"),
    ("RUN", "#snapshots-chart"),
])
def test_a_static_export_opens_from_a_file_with_the_network_off(page, world, browser, tmp_path, path, chart):
    if path == "RUN":
        run = Run.objects.filter(is_private=False, snapshots__status="graded").first()
        path = f"/runs/{run.pk}/?export=html"
    response = page.request.get(page.base_url + path)
    assert response.ok
    target = tmp_path / "export.html"
    target.write_bytes(response.body())
    context, blocked = _offline_context(browser)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(target.as_uri())
    tab.wait_for_selector(f"{chart}[data-drawn='true']", timeout=20000)
    assert tab.locator(f"{chart} svg.main-svg").count() > 0
    assert tab.evaluate(f"document.querySelector('{chart}').data.length") > 0
    assert errors == [] and blocked == []
    context.close()


def test_scaling_pages_draw_under_the_content_security_policy(page, world, browser):
    context = browser.new_context()  # obeys the policy (the shared tab bypasses it)
    tab = context.new_page()
    violations: list[str] = []
    tab.on("console", lambda message: violations.append(message.text)
           if "Content Security Policy" in message.text else None)
    for kind in ("time", "pass-at-k", "hardware"):
        tab.goto(f"{page.base_url}/scaling/{kind}/?split=tiny-test")
        tab.wait_for_selector("#scaling-chart[data-drawn='true']", timeout=15000)
    tab.fill("input[name=model]", "synthetic")
    tab.dispatch_event("input[name=model]", "change")
    tab.wait_for_url("**model=synthetic**")
    assert violations == []
    context.close()


@pytest.mark.parametrize("size", [{"width": 1440, "height": 900}, {"width": 390, "height": 844}], ids=["1440", "390"])
def test_an_empty_chart_says_what_it_lacks_and_comes_back_drawn(page, world, size):
    page.set_viewport_size(size)
    page.goto(f"{page.base_url}/scaling/time/?split=tiny-test")
    _drawn(page, 0)
    assert page.locator("#scaling-chart").is_visible() and not page.locator("#scaling-empty").is_visible()
    before = _revision(page)
    page.fill("input[name=agent]", "no-such-agent")
    page.dispatch_event("input[name=agent]", "change")
    _drawn(page, before)
    assert not page.locator("#scaling-chart").is_visible()
    assert page.text_content("#scaling-empty").startswith("No experiment has graded runs in this split")
    before = _revision(page)
    page.fill("input[name=agent]", "")
    page.dispatch_event("input[name=agent]", "change")
    _drawn(page, before)
    assert page.locator("#scaling-chart").is_visible() and not page.locator("#scaling-empty").is_visible()
    width = page.eval_on_selector("#scaling-chart .main-svg", "el => el.getBoundingClientRect().width")
    assert width <= size["width"] and width > size["width"] / 2 - 100  # resized once shown again

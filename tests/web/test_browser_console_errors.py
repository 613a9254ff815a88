"""The browser fixture fails a test on what a visitor's console would show, and the pages give it nothing
to show: no JavaScript error, no console error, no request answered with an HTTP error (a missing
/favicon.ico included)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_fixture_records_failed_requests_and_console_errors(page):
    page.goto(page.base_url + "/")
    page.evaluate("fetch('/static/js/no-such-file.js').catch(() => null)")
    page.evaluate("console.error('something broke')")
    page.wait_for_timeout(300)
    assert any("HTTP 404" in p and "no-such-file.js" in p for p in page.problems)
    assert any("something broke" in p for p in page.problems)
    page.problems.clear()  # seen: this test made them on purpose


@pytest.mark.parametrize("path", ["/", "/scaling/time/", "/scaling/pass-at-k/", "/scaling/hardware/",
                                  "/competitions/", "/runs/"])
def test_pages_request_nothing_missing(page, path):
    page.goto(page.base_url + path, wait_until="networkidle")
    page.wait_for_timeout(1000)  # the browser asks for an icon after the page loaded
    assert page.problems == [] and page.js_errors == []

"""The replay player's keys at 1440 and 390 px: the counter counts from 1, Home and End open the first
and last step (a window the page has not loaded yet included), and a replay saved as HTML and opened
from disk (file://, its <base href> pointing at the site) moves with j/k and Home/End without a
SecurityError or any other error."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.web.test_browser_replay import current, open_replay, tree_search_run, wait_current

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SIZES = [{"width": 1440, "height": 900}, {"width": 390, "height": 844}]


@pytest.mark.parametrize("size", SIZES, ids=["1440", "390"])
def test_counter_counts_from_one_and_home_end_jump(page, size):
    page.set_viewport_size(size)
    run = tree_search_run()  # 600 steps, loaded a window at a time
    open_replay(page, run)
    assert current(page) == "0" and page.text_content("#position") == "step 1 / 600"
    page.keyboard.press("End")
    wait_current(page, 599)
    assert page.text_content("#position") == "step 600 / 600" and page.evaluate("location.hash") == "#step-599"
    page.keyboard.press("Home")
    wait_current(page, 0)
    assert page.text_content("#position") == "step 1 / 600"
    page.keyboard.press("j")
    wait_current(page, 1)
    assert page.text_content("#position") == "step 2 / 600"


@pytest.mark.parametrize("size", SIZES, ids=["1440", "390"])
def test_a_saved_replay_opened_from_disk_moves_without_errors(page, size, tmp_path):
    page.set_viewport_size(size)
    run = tree_search_run()
    saved = tmp_path / "replay.html"
    saved.write_bytes(Client().get(f"/runs/{run.pk}/?export=html").content)
    page.goto(saved.as_uri())
    page.wait_for_selector("#replay[data-ready='true']")
    assert current(page) == "0"
    for key, expected in [("j", 1), ("j", 2), ("k", 1), ("ArrowDown", 2)]:
        page.keyboard.press(key)
        wait_current(page, expected)
    assert page.evaluate("location.protocol") == "file:"
    last = page.eval_on_selector_all("article.step", "els => els[els.length - 1].dataset.index")
    page.keyboard.press("End")  # the last step the saved copy holds: nothing is fetched from the site
    wait_current(page, int(last))
    page.keyboard.press("Home")
    wait_current(page, 0)
    assert page.text_content("#position") == "step 1 / 600"
    assert not page.js_errors  # SecurityError from history.replaceState was one per key

"""At 390 px the first screen shows what a page is for, and nothing is wider than the phone; at 1440 px
the same pages keep their full layout: the side-by-side code page, the leaderboard (its table in the
first screen, prose and filters folded one tap away), the replay (a short sticky toolbar, the solution
tree before the steps), and leaderboard cells that wrap between words ("baseli ne" was one)."""

from __future__ import annotations

import pytest

from leaderboard.models import Competition
from leaderboard.trust import similarity
from tests.trust.similarity_support import COPY, ORIGINAL, add_code
from tests.trust.similarity_support import make_run as code_run
from tests.web.test_browser_replay import open_replay, tree_search_run
from tests.web.test_leaderboard import experiment, make_runs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE, DESKTOP = {"width": 390, "height": 844}, {"width": 1440, "height": 900}
# The words of the cells that the browser broke across lines (a break after a hyphen is between words).
SPLIT_WORDS = """(selector) => Array.from(document.querySelectorAll(selector)).flatMap((cell) => {
  const out = [], walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) { const node = walker.currentNode, re = /[^\\s-]+/g; let m;
    while ((m = re.exec(node.nodeValue))) { const r = document.createRange(); r.setStart(node, m.index);
      r.setEnd(node, m.index + m[0].length);
      if (Array.from(r.getClientRects()).filter((x) => x.width > 0).length > 1) out.push(m[0]); } }
  return out; })"""


def top(page, selector: str) -> float:
    return page.locator(selector).first.bounding_box()["y"]


@pytest.fixture
def copied_code():
    titanic = Competition.objects.get(slug="spaceship-titanic")
    original, copy = code_run(titanic, agent="first"), code_run(titanic, agent="second")
    long_line = "\nfeatures = [" + ", ".join(f'"column_number_{i}"' for i in range(40)) + "]\n"
    folder = "code/a_rather_deeply_nested_folder_name_an_agent_chose/"  # labels without a space to break at
    add_code(original, folder + "solution_with_a_long_descriptive_name.py", ORIGINAL + long_line)
    add_code(copy, folder + "main_with_a_long_descriptive_name_too.py", COPY + long_line)
    similarity.index_run(original)
    similarity.index_run(copy)
    return original, copy


def test_similar_code_fits_a_phone_and_stays_side_by_side_on_a_desktop(page, copied_code):
    original, copy = copied_code
    page.set_viewport_size(PHONE)
    page.goto(f"{page.base_url}/runs/{copy.pk}/similar/{original.pk}/")
    assert page.locator(".similar-region").count() >= 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    left, right = (page.locator(".similar-region").first.locator(".side-by-side > div").nth(i).bounding_box()
                   for i in (0, 1))
    assert right["y"] >= left["y"] + left["height"]  # one above the other
    page.set_viewport_size(DESKTOP)
    page.reload()
    left, right = (page.locator(".similar-region").first.locator(".side-by-side > div").nth(i).bounding_box()
                   for i in (0, 1))
    assert left["y"] == right["y"] and right["x"] > left["x"] + left["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440


@pytest.fixture
def board():
    e = experiment("DEMO scikit-learn logistic regression", "none (scikit-learn baseline)", "CPU")
    make_runs(44, [e, experiment("another-agent")])
    return e


def test_the_leaderboards_first_phone_screen_shows_its_rows(page, board):
    page.set_viewport_size(PHONE)
    page.goto(page.base_url + "/?split=lite")
    first_row = page.locator("#leaderboard tbody tr").first.bounding_box()
    assert first_row["y"] + first_row["height"] <= 844
    assert not page.locator("#leaderboard-filters").is_visible() and not page.locator(".board-about p").is_visible()
    page.click("#leaderboard-filters-fold > summary")  # one tap away
    assert page.locator("#leaderboard-filters select[name=split]").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_the_leaderboard_on_a_desktop_shows_prose_and_filters_and_breaks_no_word(page, board):
    page.set_viewport_size(DESKTOP)
    page.goto(page.base_url + "/?split=lite")
    assert "baseline)" in page.text_content("#leaderboard tbody")
    assert page.evaluate(SPLIT_WORDS, "#leaderboard tbody td:nth-child(2)") == []  # the model column
    assert page.locator(".board-about p").is_visible() and page.locator("#leaderboard-filters").is_visible()
    assert not page.locator("details.fold-on-phone > summary").first.is_visible()


def test_the_replay_on_a_phone_has_a_short_toolbar_and_the_tree_before_the_steps(page):
    run = tree_search_run()
    page.set_viewport_size(PHONE)
    open_replay(page, run)
    page.wait_for_selector("#tree[data-drawn='true']", state="attached")
    assert page.locator(".replay-toolbar").bounding_box()["height"] <= 130  # was 250
    assert top(page, "#tree-card") < top(page, "#pages")
    assert not page.locator("#search").is_visible()
    page.click(".toolbar-more > summary")
    page.fill("#search", "zebra")
    page.press("#search", "Enter")
    page.wait_for_selector("#step-120.current")
    page.click("#tree-card summary")
    page.click("#tree g.tree-node[data-index='5']")
    page.wait_for_selector("#step-5.current")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_the_replay_on_a_desktop_keeps_its_side_column(page):
    run = tree_search_run()
    page.set_viewport_size(DESKTOP)
    open_replay(page, run)
    page.wait_for_selector("#tree[data-drawn='true']")
    tree, pages = page.locator("#tree-card").bounding_box(), page.locator("#pages").bounding_box()
    assert tree["x"] > pages["x"] + pages["width"]  # beside the steps
    assert page.locator("#search").is_visible() and page.locator("#kind-filters").is_visible()

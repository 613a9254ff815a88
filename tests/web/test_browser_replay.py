"""The replay player in Chromium: permalinks, j/k, search hits, the tree, the chart, inert output."""

from __future__ import annotations

import pytest

from tests.web.test_replay_page import add_steps, make_run
from tests.web.test_untrusted_output import hostile_specs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def tree_search_run():
    """600 steps: an AIDE-like tree in the first ten, two 'zebra' hits, a deep permalink target."""
    specs = [{"kind": "code", "title": f"node {i}", "parent_index": None if i == 0 else (i - 1) // 2,
              "score": 0.5 + i / 100, "data": {"content": f"x = {i}\n", "buggy": i == 3, "is_best": i == 9}}
             for i in range(10)]
    specs += [{"kind": "message", "title": f"message {i}", "text": "plain"} for i in range(10, 600)]
    specs[120]["text"] = specs[520]["text"] = "a zebra crossed"
    specs[300] = {"kind": "score", "score": 0.9, "data": {"metric": "auc", "value": 0.9}}
    run = make_run(task_name="browser-run")
    add_steps(run, specs)
    return run


def open_replay(page, run, fragment: str = ""):
    page.goto(f"{page.base_url}/runs/{run.pk}/{fragment}")
    page.wait_for_selector("#replay[data-ready='true']")


def current(page) -> str:
    page.wait_for_function("document.querySelectorAll('article.step.current').length === 1")
    return page.eval_on_selector("article.step.current", "el => el.dataset.index")


def wait_current(page, index: int) -> None:
    page.wait_for_selector(f"#step-{index}.current")


def in_viewport(page, selector: str) -> bool:
    return page.eval_on_selector(
        selector, "el => { const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }"
    )


def test_permalink_beyond_the_first_window_opens_highlighted(page):
    run = tree_search_run()
    open_replay(page, run, "#step-450")
    wait_current(page, 450)
    assert in_viewport(page, "#step-450")
    assert page.locator("#step-0").count() == 0  # the window around 450 replaced the first one
    first = int(page.eval_on_selector("article.step", "el => el.dataset.index"))
    for _ in range(450 - first + 1):  # past the window's first card: the earlier window loads
        page.keyboard.press("k")
    wait_current(page, first - 1)
    assert in_viewport(page, f"#step-{first - 1}")


def test_keyboard_moves_the_current_step(page):
    run = tree_search_run()
    open_replay(page, run, "#step-198")
    wait_current(page, 198)
    for key, expected in [("j", 199), ("j", 200), ("k", 199), ("ArrowDown", 200), ("ArrowUp", 199)]:
        page.keyboard.press(key)
        wait_current(page, expected)
    assert page.evaluate("location.hash") == "#step-199"
    assert in_viewport(page, "#step-199")


def test_search_navigates_hits_across_windows(page):
    run = tree_search_run()
    open_replay(page, run)
    page.fill("#search", "zebra")
    page.press("#search", "Enter")
    wait_current(page, 120)
    assert page.text_content("#hit-count") == "hit 1 of 2"
    assert page.text_content("#step-120 mark").lower() == "zebra"
    page.click("#hit-next")
    wait_current(page, 520)  # not in the first window: fetched around the hit
    assert page.text_content("#hit-count") == "hit 2 of 2"
    page.click("#hit-prev")
    wait_current(page, 120)


def test_tree_node_click_opens_its_step(page):
    run = tree_search_run()
    open_replay(page, run, "#step-400")
    wait_current(page, 400)
    page.wait_for_selector("#tree[data-drawn='true']")
    assert page.locator("#tree g.tree-node").count() == 10
    assert page.locator("#tree g.tree-node.buggy").get_attribute("data-index") == "3"
    assert page.locator("#tree g.tree-node.best").get_attribute("data-index") == "9"
    page.click("#tree g.tree-node[data-index='7']")
    wait_current(page, 7)
    assert in_viewport(page, "#step-7")
    assert page.locator("#tree g.tree-node.current").get_attribute("data-index") == "7"
    assert page.text_content("#step-7 pre.code .hl-number") == "7"  # highlighted by static/js/highlight.js
    page.wait_for_selector("#score-chart[data-drawn='true']")
    assert not page.js_errors


def test_player_and_filters(page):
    run = tree_search_run()
    open_replay(page, run)
    page.select_option("#speed", "40")
    page.click("#play")
    page.wait_for_function("Number(document.querySelector('article.step.current').dataset.index) >= 5")
    page.click("#play")
    assert page.text_content("#play").strip().endswith("Play")
    page.uncheck("#kind-filters input[value='message']")
    page.wait_for_function("!document.querySelector('article.step.kind-message')")
    assert page.locator("article.step").count() == 11  # ten code nodes and one score
    assert not page.js_errors


def test_hostile_output_stays_inert(page):
    run = make_run(task_name="<script>window.__pwned = 9</script>")
    specs = hostile_specs()
    specs.append({"kind": "observation", "text": "<img src=x onerror=window.__pwned=4>" + "z" * 9000})
    add_steps(run, specs)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    open_replay(page, run)
    page.click(f"#step-{len(specs) - 1} button.show-all")  # full text arrives from the API
    page.wait_for_function(f"!document.querySelector('#step-{len(specs) - 1} .truncated')")
    page.fill("#search", "pwned")
    page.press("#search", "Enter")
    page.wait_for_selector("#hit-count:has-text('hit 1')")
    page.click("#step-1 a.permalink")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    assert page.locator("#pages img, #pages script, #pages iframe, #pages svg, #pages link").count() == 0
    assert not page.js_errors


def test_compare_chart_point_opens_the_step(page):
    a, b = tree_search_run(), tree_search_run()
    page.goto(f"{page.base_url}/compare/?runs={a.pk},{b.pk}")
    page.wait_for_selector("#compare-scores[data-drawn='true']")
    assert page.locator("#solution-diff").count() == 0  # both best solutions are the same node
    page.evaluate("""() => document.getElementById('compare-scores')
        .emit('plotly_click', {points: [{curveNumber: 1, customdata: 300}]})""")
    page.wait_for_url(f"**/runs/{b.pk}/#step-300")
    wait_current(page, 300)
    assert not page.js_errors


def test_a_search_hit_in_an_llm_prompt_opens_it(page):
    run = make_run(task_name="llm-run")
    add_steps(run, [{"kind": "plan", "title": "start"}, {"kind": "llm", "title": "call", "data": {
        "model": "gpt-4o", "recorded_by": "gateway", "messages": {"messages": [
            {"role": "user", "content": "tune the okapi features"}]}, "reply": "done"}}])
    open_replay(page, run)
    assert not page.eval_on_selector("#step-1 details.llm-prompt", "el => el.open")  # folded at first
    page.fill("#search", "okapi")
    page.press("#search", "Enter")
    wait_current(page, 1)
    assert page.eval_on_selector("#step-1 details.llm-prompt", "el => el.open")
    assert page.text_content("#step-1 details.llm-prompt mark").lower() == "okapi"

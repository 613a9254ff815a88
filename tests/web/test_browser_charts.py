"""In Chromium: charts that can be read, the AIDE tree with every node coloured
in the metric's direction, Plotly compressed and only where a chart is, no third-party images."""

from __future__ import annotations

import pytest

from leaderboard.models import Competition, HumanScore, Run
from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all
from tests.web.test_replay_page import add_steps, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def boxes(page, selector: str) -> list[dict]:
    return page.eval_on_selector_all(
        selector, "els => els.map(e => { const r = e.getBoundingClientRect();"
                  " return {x: r.x, y: r.y, w: r.width, h: r.height, text: e.textContent}; })")


def overlap(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
            and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"])


def test_item11_the_human_chart_shows_the_bulk_with_readable_labels(page, catalogue):
    competition = Competition.objects.get(slug="spaceship-titanic")
    scores = [0.96 - 0.16 * i / 199 for i in range(200)] + [0.0, 0.1]  # two outliers at the bottom
    competition.human_scores.all().delete()
    HumanScore.objects.bulk_create(HumanScore(competition=competition, position=i + 1, score=s)
                                   for i, s in enumerate(scores))
    competition.set_leaderboard_summary(scores)
    competition.save()
    page.goto(f"{page.base_url}/competitions/spaceship-titanic/")
    page.wait_for_selector("#human-leaderboard-chart .main-svg")
    low, high = page.evaluate("document.getElementById('human-leaderboard-chart').layout.xaxis.range")
    assert low > 0.7 and high <= 0.96 + 1e-9
    labels = boxes(page, "#human-leaderboard-chart g.annotation")
    thresholds = [b for b in labels if b["text"].split(" ")[0] in ("gold", "silver", "bronze", "median")]
    assert len(thresholds) == 4
    assert not any(overlap(a, b) for i, a in enumerate(thresholds) for b in thresholds[i + 1:])
    assert "2 outlying teams outside the axis" in page.locator("#human-leaderboard-chart .g-gtitle").text_content()
    assert "(higher is better)" in page.locator("#human-leaderboard-chart .g-gtitle").text_content()
    assert page.locator("#human-leaderboard-chart .g-xtitle").text_content().endswith("better →")


def test_item12_axes_have_titles_and_runs_without_scores_say_so(page, catalogue):
    run = make_run(competition=Competition.objects.get(slug="spaceship-titanic"))
    add_steps(run, [{"kind": "score", "score": 0.5 + i / 100, "data": {"metric": "accuracy"}} for i in range(5)])
    page.goto(f"{page.base_url}/runs/{run.pk}/")
    page.wait_for_selector("#score-chart[data-drawn='true']")
    assert page.locator("#score-chart .g-ytitle").text_content() == "accuracy (higher is better)"
    x_title = page.locator("#score-chart .g-xtitle").bounding_box()
    chart = page.locator("#score-chart").bounding_box()
    assert x_title["y"] + x_title["height"] <= chart["y"] + chart["height"]  # not clipped
    other = make_run(competition=Competition.objects.get(slug="spaceship-titanic"))
    add_steps(other, [{"kind": "score", "score": 0.6}])
    page.goto(f"{page.base_url}/compare/?runs={run.pk},{other.pk}")
    page.wait_for_selector("#compare-scores[data-drawn='true']")
    assert page.locator("#compare-scores .g-ytitle").text_content() == "accuracy (higher is better)"
    empty_a, empty_b = make_run(task_name="a"), make_run(task_name="b")
    add_steps(empty_a, [{"title": "hello"}])
    page.goto(f"{page.base_url}/compare/?runs={empty_a.pk},{empty_b.pk}")
    assert page.locator("#compare-no-scores").is_visible() and page.locator("#compare-scores").count() == 0
    assert "0 · s" not in page.locator("table.compare-head").inner_text()
    assert not page.js_errors


def test_item13_every_aide_node_is_in_the_tree_coloured_in_the_metrics_direction(page, db):
    [(run, _)] = import_all(TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json")
    page.goto(f"{page.base_url}/runs/{run.pk}/")
    page.wait_for_selector("#tree[data-drawn='true']")
    assert page.locator("#tree g.tree-node").count() == 20
    assert page.get_attribute("#tree", "data-direction") == "lower"  # house-prices RMSE: lower is better
    fills = page.eval_on_selector_all("#tree g.tree-node:not(.buggy) circle",
                                      "els => els.map(e => e.getAttribute('fill'))")
    assert len(fills) == 12 and "#d0d5dd" not in fills  # every scored node is coloured
    best = page.eval_on_selector("#tree g.tree-node.best circle", "e => e.getAttribute('fill')")
    assert best == "hsl(215, 60%, 30%)"  # the lowest RMSE is the darkest
    assert page.locator("#score-chart .g-ytitle").text_content().endswith("(lower is better)")


def test_item14_plotly_is_compressed_cached_and_only_on_chart_pages(page, catalogue):
    sizes = {}
    page.on("response", lambda r: sizes.setdefault(r.url, r) if "plotly" in r.url else None)
    page.goto(f"{page.base_url}/competitions/spaceship-titanic/")
    page.wait_for_selector("#human-leaderboard-chart .main-svg")
    [response] = [r for url, r in sizes.items() if url.endswith("plotly.min.js")]
    headers = response.all_headers()
    assert headers["content-encoding"] == "gzip" and "immutable" in headers["cache-control"]
    assert int(headers["content-length"]) < 2_000_000  # 4.8 MB uncompressed
    sizes.clear()
    run = make_run(task_name="no scores")
    add_steps(run, [{"title": "hello"}])
    page.goto(f"{page.base_url}/runs/{run.pk}/")
    page.goto(f"{page.base_url}/competitions/")
    assert not sizes  # no chart on these pages: no Plotly


def test_item15_description_images_from_other_hosts_are_not_loaded(page, catalogue):
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(f"{page.base_url}/competitions/denoising-dirty-documents/")
    assert page.locator(".description img").count() == 0
    links = page.locator(".description a.external-image")
    assert links.count() >= 1 and "load image from" in links.first.inner_text()
    assert all(url.startswith(page.base_url) for url in requested)
    assert Run.objects.count() == 0

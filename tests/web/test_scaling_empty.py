"""A scaling page never shows bare axes: on a fresh site (no complete seed on Lite) it opens on the split
that has one, the demo content, and says so, as the leaderboard does; a split the visitor names is
always shown, and an empty chart says what it lacks."""

from __future__ import annotations

import pytest

from tests.web.test_scaling_pages import KINDS, _embedded

pytestmark = pytest.mark.django_db



@pytest.mark.parametrize("kind", KINDS)
def test_a_fresh_site_opens_each_scaling_page_on_the_demo_split(demo_site, client, kind):
    html = client.get(f"/scaling/{kind}/").content.decode()
    assert 'id="opened-on"' in html and "so this chart opens on <strong>Demo" in html
    assert "These are demo runs, graded against synthetic answers" in html
    assert '<option value="demo" selected>' in html and 'href="?split=lite">Show Lite (low)</a>' in html
    payload = _embedded(html, "scaling-data")
    assert payload == client.get(f"/api/scaling/{kind}/?split=demo").json()
    assert any(e["n_seeds"] for e in [*payload.get("experiments", []),
                                      *(e for g in payload.get("groups", []) for e in g["experiments"])])
    assert f'href="/api/scaling/{kind}/?split=demo&amp;format=csv"' in html
    assert 'id="scaling-chart" class="chart" data-kind="{kind}" data-revision="0">'.replace("{kind}", kind) in html


@pytest.mark.parametrize("kind", KINDS)
def test_a_named_split_without_complete_seeds_says_why_the_chart_is_empty(demo_site, client, kind):
    html = client.get(f"/scaling/{kind}/?split=lite").content.decode()
    assert 'id="opened-on"' not in html and '<option value="lite" selected>' in html
    # the demo runs touch 2 of Lite's 22 competitions
    assert "so there is nothing to draw. Tick" in html and "(2 experiments.)</span></p>" in html
    assert f'data-kind="{kind}" data-revision="0" hidden>' in html  # no bare 0-4 % axes
    padded = client.get(f"/scaling/{kind}/?split=lite&pad=on").content.decode()
    assert "(2 experiments.)" not in padded and f'data-kind="{kind}" data-revision="0">' in padded
    assert 'id="scaling-empty" data-none=' in padded and '." hidden></p>' in padded


def test_a_split_without_runs_says_so(catalogue, client):
    html = client.get("/scaling/time/?split=high").content.decode()
    assert "No experiment has graded runs in this split with these filters, so there is nothing to draw." in html
    assert 'id="opened-on"' not in client.get("/scaling/time/").content.decode()  # nowhere to open on

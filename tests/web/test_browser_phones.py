"""Every page is usable at 390 px: nothing wider than the screen (wide tables
scroll inside their own box) and the navigation folds behind a Menu button."""

from __future__ import annotations

import pytest

from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all
from tests.web.test_leaderboard import experiment, make_runs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def site(catalogue):
    e = experiment("a-rather-long-agent-name-for-a-phone", "claude-3-5-sonnet-20241022",
                   "1x A100 80GB, 36 vCPU, 440 GB")
    runs = make_runs(66, [e])
    [(aide, _)] = import_all(TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json")
    return {"experiment": e, "run": runs[0], "aide": aide}


def test_item16_no_page_is_wider_than_a_phone(page, site):
    page.set_viewport_size({"width": 390, "height": 844})
    paths = ["/", "/?split=lite&pad=true", "/competitions/", "/competitions/spaceship-titanic/",
             "/competitions/denoising-dirty-documents/", f"/experiments/{site['experiment'].pk}/",
             f"/runs/{site['run'].pk}/", f"/runs/{site['aide'].pk}/", "/runs/",
             f"/compare/?runs={site['run'].pk},{site['aide'].pk}", "/compare/", "/accounts/login/",
             "/accounts/signup/"]
    widths = {}
    for path in paths:
        page.goto(page.base_url + path)
        page.wait_for_load_state("load")
        widths[path] = page.evaluate("document.documentElement.scrollWidth")
    assert {path: w for path, w in widths.items() if w > 390} == {}
    assert not page.js_errors


def test_item16_the_navigation_folds_behind_a_menu_button(page, site):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(page.base_url + "/")
    nav = page.locator("#site-nav")
    assert not nav.is_visible() and page.locator("#nav-toggle").is_visible()
    page.click("#nav-toggle")
    assert nav.is_visible() and page.locator("#site-nav a", has_text="Runs").is_visible()
    box = page.locator(".topbar").bounding_box()
    for link in nav.locator("a").all():  # every link inside the dark header, readable
        inner = link.bounding_box()
        assert box["y"] <= inner["y"] and inner["y"] + inner["height"] <= box["y"] + box["height"]
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(page.base_url + "/")
    assert nav.is_visible() and not page.locator("#nav-toggle").is_visible()

"""The top bar leads to every part of the site: Jobs and Runners sit beside Runs, Search and Scaling on every
page, and the job form says how to pick several competitions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db


def nav_links(html: str) -> dict[str, str]:
    nav = re.search(r'<nav id="site-nav">(.*?)</nav>', html, re.S).group(1)
    return {label: href for href, label in re.findall(r'<a href="([^"]+)">([^<]+)</a>', nav)}


@pytest.mark.parametrize("url", ["/", "/competitions/", "/runs/", "/runners/", "/runs/upload/", "/jobs/"])
def test_every_page_links_jobs_and_runners_in_the_top_bar(client, alice, url):
    client.force_login(alice)
    links = nav_links(client.get(url, follow=True).content.decode())
    assert links["Jobs"] == "/jobs/" and links["Runners"] == "/runners/"
    assert list(links)[:8] == ["Leaderboard", "Competitions", "Runs", "Search", "Scaling", "Upload a run", "Jobs",
                              "Runners"]


def test_an_anonymous_visitor_sees_them_too_and_jobs_asks_to_log_in(client):
    links = nav_links(client.get("/").content.decode())
    assert {"Jobs", "Runners"} <= set(links)
    assert client.get(links["Jobs"])["Location"] == "/accounts/login/?next=/jobs/"
    assert client.get(links["Runners"]).status_code == 200


def test_the_base_template_reads_no_context_nobody_sets():
    base = (Path(settings.BASE_DIR) / "templates" / "base.html").read_text()
    assert "nav_links" not in base


def test_the_job_form_says_how_to_pick_several_competitions(client, staff):
    client.force_login(staff)
    html = client.get("/jobs/new/").content.decode()
    assert "Ctrl-click" in html and "pick a split below" in html
    assert re.search(r'<select name="competitions"[^>]*size="8"[^>]*multiple', html)

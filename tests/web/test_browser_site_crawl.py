"""The site as `make run` builds it (demo content, smoke competitions with reference leaderboards), plus a
two-minute job's runs with snapshots, visited page by page at 1440 px from the first page's links: no page
shows a console error or an HTTP error (the page fixture fails on those), no table is cut without saying
it scrolls, and no duration is printed as a float of hours."""

from __future__ import annotations

import re
from io import StringIO
from urllib.parse import urljoin, urlsplit

import pytest
from django.core.management import call_command

from tests.runner import test_job_grading_outcome

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ungradable_task = test_job_grading_outcome.ungradable_task  # the fixture: a succeeded job with an unscored run
MAX_PAGES = 45
SKIP = ("/admin", "/api/", "/accounts/logout", "/static/", "/media/", "/logout")
# A number with many decimals (0.03333333333333333 hours), or any number of hours with decimals ("0.03 h").
RAW_FLOAT = re.compile(r"(?<![\w.])\d+\.\d{4,}(?![\w.])|\d\.\d+ h\b")

LAYOUT = """() => {
  const width = window.innerWidth, problems = [];
  if (document.documentElement.scrollWidth > width + 1) problems.push('page scrolls sideways: ' +
      document.documentElement.scrollWidth + ' > ' + width);
  for (const table of document.querySelectorAll('table')) {
    const box = table.closest('.table-scroll');
    if (box) {
      const hint = box.previousElementSibling && box.previousElementSibling.classList.contains('scroll-hint');
      if (box.scrollWidth > box.clientWidth + 1 && !hint) problems.push('table cut without a hint: ' + table.id);
    } else if (table.getBoundingClientRect().right > width + 1) {
      problems.push('table past the window: ' + (table.id || table.className));
    }
  }
  return problems;
}"""


# Where durations are printed: table cells under a header about time, chart legends and hover-free labels.
DURATION_TEXTS = """() => {
  const out = [];
  for (const table of document.querySelectorAll('table')) {
    const heads = Array.from(table.querySelectorAll('thead th')).map((th) => th.textContent);
    heads.forEach((head, i) => {
      if (!/time|hour|duration|budget|limit/i.test(head)) return;
      for (const tr of table.querySelectorAll('tbody tr')) {
        if (tr.children[i]) out.push(head + ': ' + tr.children[i].textContent);
      }
    });
  }
  document.querySelectorAll('.legendtext, .gtitle, .xtitle, .ytitle').forEach((el) => out.push(el.textContent));
  return out;
}"""


@pytest.fixture
def built_site(settings, tmp_path, catalogue, demo_agent_runs):
    from leaderboard.models import Experiment, Run
    from tests.analysis.test_scaling_short_runs import short_world

    settings.VAR_DIR = tmp_path
    call_command("seed_demo", "--agent-runs", str(demo_agent_runs), stdout=StringIO())
    call_command("make_smoke_competitions", stdout=StringIO())
    short = short_world(with_snapshots=True)
    a, b = Run.objects.filter(experiment=short).order_by("pk").values_list("pk", flat=True)[:2]
    demo = Experiment.objects.exclude(pk=short.pk).order_by("pk").values_list("pk", flat=True)[:2]
    # pages the first page's links reach in more steps than the crawl takes: a short run (its chart in
    # seconds), two runs side by side, two experiments compared, a reference leaderboard's competition
    return [f"/runs/{a}/", f"/compare/?runs={a},{b}", f"/compare/experiments/?a={demo[0]}&b={demo[1]}",
            "/competitions/smoke-wine/", "/scaling/time/?split=short-test"]


def _links(page, base: str) -> list[str]:
    # a link marked `download` is a file, not a page (a competition's public data, a run's artifacts)
    hrefs = page.eval_on_selector_all("a[href]:not([download])", "els => els.map(e => e.getAttribute('href'))")
    out = []
    for href in hrefs:
        url = urljoin(page.url, href)
        parts = urlsplit(url)
        if url.startswith(base) and not parts.path.startswith(SKIP) and "export=" not in parts.query \
                and "format=" not in parts.query and not parts.path.endswith((".csv", ".json", ".zip", ".jsonl")):
            out.append(parts._replace(fragment="").geturl())
    return out


def crawl(page, starts: list[str], max_pages: int = MAX_PAGES) -> tuple[set[str], list[str]]:
    """Visit the pages the start pages link to, breadth first: (the URLs seen, what was wrong on them)."""
    page.set_viewport_size({"width": 1440, "height": 900})
    base = page.base_url
    queue, seen, findings = [base + path for path in starts], set(), []
    paths_seen: dict[str, int] = {}
    while queue and len(seen) < max_pages:
        url = queue.pop(0)
        path = urlsplit(url).path
        # at most three pages per kind of page (ids and slugs replaced), queries included
        pattern = re.sub(r"/\d+/", "/N/", re.sub(r"^/(competitions|research-tasks)/[^/]+/", r"/\1/X/", path))
        if url in seen or paths_seen.get(pattern, 0) >= 3:
            continue
        seen.add(url)
        paths_seen[pattern] = paths_seen.get(pattern, 0) + 1
        response = page.goto(url, wait_until="networkidle")
        if response is None or response.headers.get("content-type", "").split(";")[0] != "text/html":
            continue
        page.wait_for_timeout(150)
        if page.evaluate(LAYOUT):  # a chart drawn late can still move the layout: look again
            page.wait_for_timeout(2000)
            findings += [f"{url}: {p}" for p in page.evaluate(LAYOUT)]
        for text in page.evaluate(DURATION_TEXTS):
            findings += [f"{url}: raw duration {m!r} in {text[:80]!r}" for m in RAW_FLOAT.findall(text)]
        queue += [link for link in _links(page, base) if link not in seen]
    return seen, findings


def test_every_page_reached_from_the_first_one_is_clean_at_1440(page, built_site):
    seen, findings = crawl(page, ["/", *built_site])
    assert len(seen) >= 15, sorted(seen)
    assert not findings, "\n".join(findings)


def test_a_staff_member_s_job_pages_are_clean_at_1440(page, ungradable_task, staff, client):
    """The job list, a job whose run could not be scored, the job form and the runners, signed in."""
    client.force_login(staff)
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                               "url": page.base_url}])
    seen, findings = crawl(page, ["/jobs/", f"/jobs/{ungradable_task.job_id}/", "/jobs/new/", "/runners/"], 15)
    assert {urlsplit(url).path for url in seen} >= {"/jobs/", f"/jobs/{ungradable_task.job_id}/", "/jobs/new/"}
    assert not findings, "\n".join(findings)
    page.goto(page.base_url + "/jobs/new/")  # signed in, not sent to the login page
    assert page.locator("select#id_agent").count() == 1 and page.locator("select#id_network").count() == 1

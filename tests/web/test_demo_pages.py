"""The demo `make run` loads shows every kind of page working, labelled as demo: the board's demo rows
have a number in every column, each demo run has a trajectory and graded snapshots, and the experiment
pages, the replay, the scaling curves, both comparisons and the similarity page have content; none of
it carries a "verified" badge, since synthetic answers verify nothing."""

from __future__ import annotations

import re

import pytest

from leaderboard.management.commands.seed_demo import AGENT_NAME
from leaderboard.models import Run, Snapshot

pytestmark = pytest.mark.django_db

DASHES = {"", "–", "-", "—"}
VERIFIED_BADGE = re.compile(r'class="badge verified"')


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _page(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def _demo_rows(board: str) -> list[str]:
    rows = re.findall(r"<tr>\s*<td><a href=\"/experiments/\d+/\">.*?</tr>", board, flags=re.S)
    return [row for row in rows if "demo · synthetic answers" in row]


def test_every_page_kind_of_the_demo_has_content_labelled_demo(demo_site, client):
    runs = list(Run.objects.filter(experiment__agent__name=AGENT_NAME).select_related("experiment"))
    experiments = sorted({run.experiment_id for run in runs})
    assert len(experiments) == 2  # differing only in hardware

    # The board: each demo row has a value in every numeric column, and a demo badge, never "verified".
    board = _page(client, "/?split=demo")
    rows = _demo_rows(board)
    assert len(rows) == len(experiments)
    for row in rows:
        cells = [_text(cell) for cell in re.findall(r'<td class="num"[^>]*>(.*?)</td>', row, flags=re.S)]
        assert len(cells) >= 10 and not [cell for cell in cells if cell in DASHES], cells
        assert '<span class="badge demo"' in row and not VERIFIED_BADGE.search(row)
    assert not _demo_rows(_page(client, "/?split=demo&verified=true"))  # "verified only" leaves them out

    # Each run: a trajectory with steps, at least two graded snapshots, the demo label, no verified badge.
    for run in runs:
        assert run.n_steps > 0 and run.duration_s and run.tokens_in == 0 and run.cost_usd == 0.0
        assert run.snapshots.filter(status=Snapshot.Status.GRADED).count() >= 2
        replay = _page(client, f"/runs/{run.pk}/")
        assert 'id="demo-label"' in replay and not VERIFIED_BADGE.search(replay)
        assert 'data-kind="code"' in replay and 'id="snapshots-chart"' in replay
    assert not VERIFIED_BADGE.search(_page(client, "/runs/?split=demo"))
    verified = _page(client, "/runs/?verification=verified")
    assert not [run.pk for run in runs if f'href="/runs/{run.pk}/"' in verified]

    for pk in experiments:
        page = _page(client, f"/experiments/{pk}/")
        assert "Demo content" in page and re.search(r"\d+\.\d\d ± \d+\.\d\d", _text(page))

    for kind in ("time", "pass-at-k", "hardware"):
        assert "These are demo runs" in _page(client, f"/scaling/{kind}/?split=demo")
        payload = client.get(f"/api/scaling/{kind}/?split=demo").json()
        shown = payload.get("experiments") or [e for g in payload.get("groups", []) for e in g["experiments"]]
        assert {e["experiment_id"] for e in shown} == set(experiments), kind
        assert all(e["n_seeds"] == 3 for e in shown)
    # The time curve is drawn from the snapshots: a budget at the earliest one, before any model was fitted.
    first = min(s.elapsed_seconds for run in runs for s in run.snapshots.all())
    hours = client.get("/api/scaling/time/?split=demo").json()["hours"]
    assert len(hours) >= 3 and min(hours) * 3600 == pytest.approx(first, abs=0.01)

    a, b = experiments
    paired = _page(client, f"/compare/experiments/?a={a}&b={b}&split=demo")
    assert "Paired by competition (2 competitions both attempted)" in _text(paired)
    assert 'id="demo-label"' in paired and "CPU, 1 core" in paired and "CPU, 2 cores" in paired
    one, other = runs[0], next(r for r in runs if r.competition_id == runs[0].competition_id and r != runs[0])
    compared = _page(client, f"/compare/?runs={one.pk},{other.pk}")
    assert "demo · synthetic answers" in compared and "Steps side by side" in compared

    # The baseline agent writes the same candidates on every seed: its runs' code is found alike.
    similar = _page(client, f"/runs/{one.pk}/")
    assert "Similar code" in similar and f"/runs/{one.pk}/similar/" in similar
    other_pk = re.search(rf"/runs/{one.pk}/similar/(\d+)/", similar).group(1)
    side_by_side = _page(client, f"/runs/{one.pk}/similar/{other_pk}/")
    assert 'class="demo-label"' in side_by_side and "similar-region" in side_by_side

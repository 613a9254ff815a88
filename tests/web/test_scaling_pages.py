"""The scaling pages, the runs placed among the humans, and static exports (server side; the browser
tests draw them)."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from leaderboard.competitions import humans
from leaderboard.models import Experiment, Run
from tests.analysis.test_scaling_curves import make_world

KINDS = ["time", "pass-at-k", "hardware"]


@pytest.fixture
def world(db, catalogue, bob):
    return make_world(bob)


def _embedded(html: str, element_id: str):
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S)
    assert match, element_id
    return json.loads(match.group(1))


@pytest.mark.parametrize("kind", KINDS)
def test_each_page_embeds_exactly_the_api_payload_and_links_its_csv(client, world, kind):
    query = "split=tiny-test&pad=true"
    page = client.get(f"/scaling/{kind}/?{query}")
    assert page.status_code == 200
    html = page.content.decode()
    api = client.get(f"/api/scaling/{kind}/?{query}").json()
    assert _embedded(html, "scaling-data") == api
    assert f'href="/api/scaling/{kind}/?{query.replace("&", "&amp;")}&amp;format=csv"' in html


def test_a_bad_filter_is_a_400_page_with_the_reason(client, world):
    response = client.get("/scaling/time/?split=tiny-test&hours=soon")
    assert response.status_code == 400 and "hours" in response.content.decode()
    assert client.get("/scaling/nothing/").status_code == 404


def _assert_self_contained(html: str, charts: bool = True) -> None:
    assert not re.search(r'<script[^>]+src=', html) and not re.search(r'<link[^>]+stylesheet', html)
    assert "<style>" in html and ":root" in html  # the site's CSS is inside
    if charts:
        assert "Plotly" in html and len(html) > 1_000_000  # plotly.min.js is inside


@pytest.mark.parametrize("kind", KINDS)
def test_scaling_export_is_one_self_contained_file(client, world, kind):
    response = client.get(f"/scaling/{kind}/?split=tiny-test&export=html")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="medalboard-scaling-{kind}-tiny-test.html"'
    html = response.content.decode()
    _assert_self_contained(html)
    assert _embedded(html, "scaling-data") == client.get(f"/api/scaling/{kind}/?split=tiny-test").json()
    assert 'id="scaling-filters"' not in html and "data:text/csv" in html


def test_leaderboard_experiment_and_replay_exports(client, world):
    experiment = world["experiments"][0]
    run = Run.objects.filter(experiment=experiment, is_private=False).first()
    for url, charts in (("/?split=tiny-test&export=html", False), (f"/experiments/{experiment.pk}/?export=html", True),
                        (f"/runs/{run.pk}/?export=html", True)):
        response = client.get(url)
        assert response.status_code == 200 and "attachment" in response["Content-Disposition"], url
        _assert_self_contained(response.content.decode(), charts)
    replay = client.get(f"/runs/{run.pk}/?export=html").content.decode()
    assert _embedded(replay, "replay-outline-data") == client.get(f"/api/runs/{run.pk}/outline/").json()


def test_exports_respect_visibility(client, world):
    private = Run.objects.get(is_private=True)
    assert client.get(f"/runs/{private.pk}/?export=html").status_code == 404


def test_agent_names_are_escaped_in_exports(client, world):
    Experiment.objects.filter(pk=world["experiments"][0].pk).update(name="x")
    agent = world["experiments"][0].agent
    agent.name = '<script>alert("x")</script>'
    agent.save()
    html = client.get("/scaling/time/?split=tiny-test&export=html").content.decode()
    assert '<script>alert("x")</script>' not in html


def test_competition_page_places_every_visible_run_among_the_humans(client, world, bob):
    competition = world["competitions"][0]
    Run.objects.filter(competition=competition).update(score=0.5)
    visible = Run.objects.filter(competition=competition, is_private=False, status="graded")
    figure = _embedded(client.get(f"/competitions/{competition.slug}/").content.decode(), "human-leaderboard-figure")
    marks = [t for t in figure["data"] if t.get("name") == "agent runs"][0]
    assert sorted(marks["customdata"]) == sorted(reverse("run-detail", args=[r.pk]) for r in visible)


def test_private_runs_are_marked_only_for_their_owner(world, bob):
    private = Run.objects.get(is_private=True)
    Run.objects.filter(pk=private.pk).update(score=0.5)
    url = reverse("run-detail", args=[private.pk])
    assert url not in [m["url"] for m in humans.run_marks(competition=private.competition, user=None)]
    assert url in [m["url"] for m in humans.run_marks(competition=private.competition, user=bob)]


def test_experiment_page_draws_the_share_of_humans_beaten(client, world):
    experiment = world["experiments"][1]
    runs = list(Run.objects.filter(experiment=experiment, is_private=False).order_by("created_at", "id"))
    for n, run in enumerate(runs):
        Run.objects.filter(pk=run.pk).update(beats_human_pct=float(n * 7 % 100))
    expected = {}
    for competition in world["competitions"]:
        latest = {}
        for n, run in enumerate(runs):
            if run.competition_id == competition.pk:
                latest[run.seed] = float(n * 7 % 100)
        expected[competition.slug] = sum(latest.values()) / len(latest)
    figure = _embedded(client.get(f"/experiments/{experiment.pk}/").content.decode(), "humans-beaten-figure")
    marks = figure["data"][1]
    assert dict(zip(marks["text"], marks["x"], strict=True)) == pytest.approx(expected)


def test_the_numbers_table_writes_times_for_people_and_the_csv_keeps_numbers(catalogue, client):
    from tests.analysis.test_scaling_short_runs import short_world

    short_world(with_snapshots=True)
    page = client.get("/scaling/time/", {"split": "short-test"}).content.decode()
    table = page.split('id="scaling-table"')[1].split("</table>")[0]
    assert "<th>time limit</th>" in table and "<td>2 min</td>" in table and "<td>30 s</td>" in table
    assert "0.0333" not in table and "0.00833" not in table and "<th>hours</th>" not in table
    csv_text = client.get("/api/scaling/time/", {"split": "short-test", "format": "csv"}).content.decode()
    assert "time_limit_hours" in csv_text.splitlines()[0] and "0.0333" in csv_text


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_page_asked_for_csv_or_json_sends_to_the_api(client, world, kind, fmt):
    response = client.get(f"/scaling/{kind}/?split=tiny-test&pad=true&format={fmt}")
    assert response.status_code == 302
    assert response["Location"] == f"/api/scaling/{kind}/?split=tiny-test&pad=true&format={fmt}"
    followed = client.get(response["Location"])
    assert followed["Content-Type"].startswith("text/csv" if fmt == "csv" else "application/json")


@pytest.mark.parametrize("value, ticked", [("on", True), ("true", True), ("1", True), ("yes", True),
                                           ("false", False), ("", False)])
def test_the_pad_box_shows_what_was_applied(client, world, value, ticked):
    html = client.get(f"/scaling/time/?split=tiny-test&pad={value}").content.decode()
    assert ('name="pad" value="true" checked>' in html) is ticked
    assert _embedded(html, "scaling-data") == client.get(f"/api/scaling/time/?split=tiny-test&pad={value}").json()

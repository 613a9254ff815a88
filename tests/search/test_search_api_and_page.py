"""GET /api/search/ and /search/: hits grouped by run, each with its step's permalink and the match
marked in escaped HTML, filters, cursor paging, and a clear 400 for what cannot be searched."""

from __future__ import annotations

from django.urls import reverse

from leaderboard.models import Competition, Run
from leaderboard.search import service
from tests.search.support import run_with


def test_api_groups_hits_by_run_with_permalinks_and_escaped_highlights(db, client):
    older = run_with([("plan", "nothing"), ("error", "<script>alert(1)</script> KeyError: 'id'")])
    newer = run_with([("error", "KeyError: 'id' again"), ("plan", "x"), ("error", "KeyError: 'id' once more")])
    body = client.get(reverse("api-search"), {"q": "\"KeyError: 'id'\""}).json()
    assert [g["run"] for g in body["results"]] == [newer.pk, older.pk]
    assert [h["index"] for h in body["results"][0]["hits"]] == [0, 2]
    hit = body["results"][1]["hits"][0]
    assert hit["url"] == f"/runs/{older.pk}/#step-1"
    assert "<script>" not in hit["snippet_html"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt; <mark>KeyError: &#x27;id&#x27;</mark>" in hit["snippet_html"]
    assert body["next_cursor"] is None
    page = client.get(reverse("search"), {"q": "\"KeyError: 'id'\""}).content.decode()
    assert "<script>alert" not in page
    assert f'href="/runs/{older.pk}/#step-1"' in page


def test_cursor_pages_through_every_hit(db, client, monkeypatch):
    monkeypatch.setattr(service, "PAGE_HITS", 3)
    runs = [run_with([("plan", f"quokka {i} {k}") for k in range(2)]) for i in range(4)]
    seen, cursor = [], ""
    while True:
        body = client.get(reverse("api-search"), {"q": "quokka", "cursor": cursor}).json()
        seen += [(g["run"], h["index"]) for g in body["results"] for h in g["hits"]]
        if body["next_cursor"] is None:
            break
        cursor = body["next_cursor"]
    assert seen == [(r.pk, k) for r in reversed(runs) for k in range(2)]


def test_filters(db, client, catalogue):
    titanic = Competition.objects.get(slug="spaceship-titanic")
    a = run_with([("error", "boom"), ("plan", "boom")], agent="aide", model="gpt-4o", competition=titanic,
                 verification=Run.Verification.VERIFIED, gold_medal=True, any_medal=True)
    b = run_with([("error", "boom")], agent="openhands", model="claude")
    cases = {"competition": ("spaceship-titanic", [a.pk]), "agent": ("openhands", [b.pk]),
             "model": ("gpt-4o", [a.pk]), "experiment": (b.experiment_id, [b.pk]), "medal": ("gold", [a.pk]),
             "verification": ("verified", [a.pk])}
    for name, (value, expected) in cases.items():
        body = client.get(reverse("api-search"), {"q": "boom", name: value}).json()
        assert [g["run"] for g in body["results"]] == expected, name
    body = client.get(reverse("api-search"), {"q": "boom", "kind": "plan"}).json()
    assert [(g["run"], [h["index"] for h in g["hits"]]) for g in body["results"]] == [(a.pk, [1])]
    body = client.get(reverse("api-search"), {"q": "boom", "medal": "none"}).json()
    assert [g["run"] for g in body["results"]] == [b.pk]


def test_bad_input_is_a_clear_400(db, client):
    for params, field in [({"q": ""}, "q"), ({"q": "x", "kind": "nope"}, "kind"), ({"q": "x", "cursor": "abc"}, "q"),
                          ({"q": "x" * 501}, "q"), ({"q": " ".join(f"w{i}" for i in range(13))}, "q"),
                          ({"q": "x", "medal": "platinum"}, "medal")]:
        response = client.get(reverse("api-search"), params)
        assert response.status_code == 400, params
        assert field in response.json(), params
    page = client.get(reverse("search"), {"q": "x", "kind": "nope"})
    assert page.status_code == 400
    assert 'id="search-error"' in page.content.decode()
    assert client.get(reverse("search")).status_code == 200  # the empty form

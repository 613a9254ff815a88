"""Competition list and page: filters, constant queries, safe Markdown, no-baseline message."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.models import Competition, Split


def test_list_shows_every_competition_with_its_columns(client, catalogue):
    response = client.get("/competitions/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "82 competitions" in html
    assert "Spaceship Titanic" in html and "lower is better" in html and "higher is better" in html
    assert html.count("no human baseline available") == 7


def test_list_filters_by_split_and_search(client, catalogue):
    html = client.get("/competitions/?split=low").content.decode()
    assert "22 competitions" in html and "aerial-cactus-identification" in html and "AI4Code" not in html
    html = client.get("/competitions/?q=titanic").content.decode()
    assert "1 competition<" in html and "spaceship-titanic" in html


def _list_queries(client) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get("/competitions/").status_code == 200
    return len(ctx.captured_queries)


def test_list_query_count_is_constant(client, catalogue):
    full = _list_queries(client)
    low = Split.objects.get(slug="low")
    for slug in Competition.objects.exclude(splits=low).values_list("slug", flat=True)[:60]:
        Competition.objects.filter(slug=slug).delete()
    assert Competition.objects.count() == 22
    assert _list_queries(client) == full
    assert full <= 4  # competitions + benchmark join, splits prefetch, split filter options


def test_competition_page_has_chart_data_and_thresholds(client, catalogue):
    html = client.get("/competitions/spaceship-titanic/").content.decode()
    assert 'id="human-leaderboard-figure"' in html and "plotly.min.js" in html
    assert "0.81903" in html  # gold threshold
    assert "1967 teams" in html


def test_competition_without_leaderboard_says_so(client, catalogue):
    html = client.get("/competitions/siim-isic-melanoma-classification/").content.decode()
    assert "No human baseline available" in html
    assert "human-leaderboard-figure" not in html


def test_description_markdown_is_rendered_safely(client, catalogue):
    competition = Competition.objects.get(slug="spaceship-titanic")
    competition.description = (
        "# Title\n\n<script>window.__pwned=1</script>\n\n[click](javascript:alert(1))\n\n"
        '<img src=x onerror="alert(1)">\n\n**bold**'
    )
    competition.save()
    html = client.get("/competitions/spaceship-titanic/").content.decode()
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html
    assert "<script>window.__pwned" not in html
    assert "javascript:alert" not in html
    assert "onerror" not in html


def test_unknown_competition_is_404(client, catalogue):
    assert client.get("/competitions/nope/").status_code == 404


@pytest.mark.parametrize("url", ["/", "/competitions/", "/competitions/spaceship-titanic/", "/api/competitions/",
                                 "/api/schema/", "/api/docs/", "/accounts/login/"])
def test_pages_render_for_anonymous(client, catalogue, url):
    assert client.get(url).status_code == 200


def test_the_api_says_grading_is_available_for_all_82(client, catalogue):
    api = client.get("/api/competitions/?limit=500").json()["results"]
    assert len(api) == 82 and all(c["grading_available"] for c in api)
    assert "grading not available" not in client.get("/competitions/").content.decode()


def test_pages_and_api_say_where_grading_is_available(client, catalogue, monkeypatch):
    from leaderboard.grading import grading_available
    from leaderboard.grading.specs import SPECS

    monkeypatch.delitem(SPECS, "3d-object-detection-for-autonomous-vehicles")  # as if it had no grader
    assert grading_available("aerial-cactus-identification")
    assert not grading_available("3d-object-detection-for-autonomous-vehicles")
    api = {c["id"]: c for c in client.get("/api/competitions/?limit=500").json()["results"]}
    assert api["aerial-cactus-identification"]["grading_available"] is True
    assert api["3d-object-detection-for-autonomous-vehicles"]["grading_available"] is False
    listing = client.get("/competitions/").content.decode()
    assert listing.count("grading not available") == sum(not c["grading_available"] for c in api.values())
    page = client.get("/competitions/aerial-cactus-identification/").content.decode()
    assert "metric <code>roc-auc</code>" in page and "id column <code>id</code>" in page
    page = client.get("/competitions/3d-object-detection-for-autonomous-vehicles/").content.decode()
    assert "Grading not available" in page

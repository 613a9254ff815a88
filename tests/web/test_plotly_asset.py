"""Plotly's script: gzip-compressed, cacheable for a year under a versioned URL, and only on pages
that draw a chart."""

from __future__ import annotations

import gzip

import plotly

from leaderboard.web import plotly_asset

URL = f"/assets/plotly/{plotly.__version__}/plotly.min.js"


def test_served_compressed_with_far_future_caching(client, db):
    response = client.get(URL, HTTP_ACCEPT_ENCODING="gzip, br")
    raw = plotly_asset.SOURCE.read_bytes()
    assert response["Content-Encoding"] == "gzip" and gzip.decompress(response.content) == raw
    assert len(response.content) < len(raw) / 2
    assert response["Cache-Control"] == "public, max-age=31536000, immutable"
    assert response["Content-Type"].startswith("text/javascript")
    again = client.get(URL, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304


def test_plain_for_clients_without_gzip_and_404_for_other_versions(client, db):
    response = client.get(URL)
    assert "Content-Encoding" not in response and response.content == plotly_asset.SOURCE.read_bytes()
    assert client.get("/assets/plotly/0.0.1/plotly.min.js").status_code == 404


def test_only_pages_with_a_chart_load_it(client, catalogue):
    assert URL in client.get("/competitions/spaceship-titanic/").content.decode()
    for page in ("/competitions/", "/runs/", "/?split=lite", "/competitions/siim-isic-melanoma-classification/"):
        assert "plotly" not in client.get(page).content.decode(), page

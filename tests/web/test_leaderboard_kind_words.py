"""A reference leaderboard (simple baselines) is never called "human teams": the competition page's chart
and table use the words of the leaderboard's kind."""

from __future__ import annotations

import json
import re

import pytest

from leaderboard.competitions import medals
from leaderboard.competitions.catalogue import import_catalogue
from leaderboard.web.charts import human_leaderboard_figure

pytestmark = pytest.mark.django_db


def _figure_text(figure: dict) -> str:
    return json.dumps(figure)


def test_reference_figure_says_baselines():
    scores = [0.9, 0.85, 0.8, 0.7, 0.6, 0.5]
    thresholds = medals.compute_thresholds(scores)
    reference = human_leaderboard_figure(scores, thresholds, reference=True)
    kaggle = human_leaderboard_figure(scores, thresholds)
    assert reference["layout"]["title"]["text"].startswith("6 reference baselines (not Kaggle humans)")
    assert "human teams" not in _figure_text(reference) and "team" not in _figure_text(reference)
    assert reference["layout"]["yaxis"]["title"]["text"] == "baselines"
    assert kaggle["layout"]["title"]["text"].startswith("6 human teams")


def test_competition_page_of_a_reference_leaderboard(smoke_root, client):
    import_catalogue(smoke_root, data_dir=smoke_root / "data")
    page = client.get("/competitions/smoke-wine/").content.decode()
    figure = re.search(r'<script id="human-leaderboard-figure" type="application/json">(.*?)</script>', page, re.S)
    assert figure and "human teams" not in figure.group(1) and "reference baselines" in figure.group(1)

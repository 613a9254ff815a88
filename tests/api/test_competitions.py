"""The competitions API, checked against an independent implementation of MLE-bench's rules."""

import math

import numpy as np
import pandas as pd
import pytest

from tests.conftest import CATALOGUE_DIR

FIELDS = {"id", "name", "metric", "is_lower_better", "n_teams", "splits", "gold_threshold", "silver_threshold",
          "bronze_threshold", "median_threshold"}


def independent_thresholds(path):
    """Written from SOURCES.md's table with pandas/numpy, sharing no code with leaderboard.competitions.medals."""
    scores = pd.read_csv(path)["score"].to_numpy(dtype=float)
    n = len(scores)
    table = [  # (lowest N, gold, silver, bronze) as functions of N
        (1000, lambda n: 10 + math.floor(0.002 * n), lambda n: max(1, math.floor(0.05 * n)),
         lambda n: max(1, math.floor(0.1 * n))),
        (250, lambda n: 10 + math.floor(0.002 * n), lambda n: 50, lambda n: 100),
        (100, lambda n: 10, lambda n: max(1, math.floor(0.2 * n)), lambda n: max(1, math.floor(0.4 * n))),
        (1, lambda n: max(1, math.floor(0.1 * n)), lambda n: max(1, math.floor(0.2 * n)),
         lambda n: max(1, math.floor(0.4 * n))),
    ]
    gold, silver, bronze = next((g(n), s(n), b(n)) for low, g, s, b in table if n >= low)
    return {
        "n_teams": n,
        "is_lower_better": bool(scores[0] < scores[-1]),
        "gold_threshold": scores[gold - 1],
        "silver_threshold": scores[silver - 1],
        "bronze_threshold": scores[bronze - 1],
        "median_threshold": float(np.median(scores)),
    }


@pytest.fixture
def api_competitions(client, catalogue):
    response = client.get("/api/competitions/?limit=500")
    assert response.status_code == 200
    return {c["id"]: c for c in response.json()["results"]}


def test_all_82_competitions_with_the_documented_fields(api_competitions):
    assert len(api_competitions) == 82
    for competition in api_competitions.values():
        assert FIELDS <= set(competition)


def test_thresholds_equal_an_independent_implementation_for_all_75_leaderboards(api_competitions):
    paths = sorted((CATALOGUE_DIR / "competitions").glob("*/leaderboard.csv"))
    assert len(paths) == 75
    for path in paths:
        expected = independent_thresholds(path)
        got = api_competitions[path.parent.name]
        for field, value in expected.items():
            assert got[field] == pytest.approx(value, abs=1e-12), (path.parent.name, field)


def test_competitions_without_leaderboard_have_null_thresholds(api_competitions):
    siim = api_competitions["siim-isic-melanoma-classification"]
    assert siim["n_teams"] == 0 and siim["has_human_baseline"] is False
    assert siim["is_lower_better"] is None
    thresholds = ("gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold")
    assert [siim[f] for f in thresholds] == [None] * 4


def test_detail_and_split_filter(client, catalogue):
    detail = client.get("/api/competitions/spaceship-titanic/").json()
    assert detail["metric"] == "accuracy" and detail["splits"] == ["dev", "spaceship-titanic"]
    assert detail["description"].startswith("# Overview")
    low = client.get("/api/competitions/?split=low&limit=500").json()
    assert low["count"] == 22
    assert client.get("/api/competitions/no-such-thing/").status_code == 404


def test_read_only(client, catalogue):
    assert client.post("/api/competitions/", {"id": "x"}).status_code in (401, 403, 405)


def test_schema_and_docs(client, db):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/competitions/" in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger" in docs.content.lower()

"""The leaderboard page and API: constant query count, filters, sorting, CSV/JSON export, published results."""

from __future__ import annotations

import csv
import io
import itertools
import re

import pytest
from scipy import stats as scipy_stats

from leaderboard.analysis import stats
from leaderboard.models import Agent, Experiment, LanguageModel, Run


def experiment(agent: str, model: str = "gpt-4o", hardware: str = "1x A10") -> Experiment:
    a, _ = Agent.objects.get_or_create(name=agent, version="")
    m, _ = LanguageModel.objects.get_or_create(name=model)
    return Experiment.objects.create(agent=a, model=m, hardware=hardware, time_limit_hours=24)


def make_runs(n: int, experiments: list[Experiment], medal_every: int = 3, **fields) -> list[Run]:
    """n graded runs over the Lite split: each experiment fills seed 0, 1, ... competition by competition."""
    lite = list(stats.resolve_split("lite").competitions.order_by("slug"))
    runs = []
    counters = {e.pk: itertools.count() for e in experiments}
    for i in range(n):
        e = experiments[i % len(experiments)]
        j = next(counters[e.pk])
        medal = j % medal_every == 0
        values = dict(
            experiment=e, competition=lite[j % len(lite)], seed=j // len(lite), status=Run.Status.GRADED,
            verification=Run.Verification.VERIFIED, valid_submission=True, any_medal=medal, gold_medal=medal,
            above_median=medal, score=0.5, cost_usd=1.5, tokens_in=1000, tokens_out=200,
        )
        runs.append(Run(**{**values, **fields}))
    return Run.objects.bulk_create(runs)


@pytest.fixture
def board(catalogue):
    experiments = [experiment("aide", "o1-preview"), experiment("mlab", "gpt-4o", "36 vCPU")]
    make_runs(22 * 3 * 2, experiments)  # 3 complete seeds each
    return experiments


def test_rows_show_mean_and_sem_over_complete_seeds(client, board):
    body = client.get("/api/leaderboard/?split=lite").json()
    assert body["split"] == "low" and body["count"] == 2
    row = next(r for r in body["results"] if r["agent"] == "aide")
    assert row["n_seeds"] == 3 and row["n_runs"] == 66 and row["verification"] == "verified"
    # every third run has a medal: 8, 7 and 7 of the 22 competitions in seeds 0, 1, 2
    per_seed = [100 * 8 / 22, 100 * 7 / 22, 100 * 7 / 22]
    assert row["any_medal_pct"] == pytest.approx(sum(per_seed) / 3, abs=0.005)
    assert row["any_medal_sem"] == pytest.approx(scipy_stats.sem(per_seed, ddof=1), abs=0.005)
    assert row["cost_usd"] == 1.5 and row["tokens"] == 1200


@pytest.mark.parametrize("n_runs", [10, 1000])
def test_query_count_does_not_grow_with_runs(client, catalogue, django_assert_num_queries, n_runs):
    experiments = [experiment(f"agent-{i}") for i in range(5)]
    make_runs(n_runs, experiments)
    # the leaderboard's version (leaderboard.analysis.page_cache), split, its competitions, the seed aggregates,
    # their experiments, the runs flagged by rule-check findings (leaderboard.trust.flags)
    with django_assert_num_queries(6):
        response = client.get("/api/leaderboard/?split=lite&pad=true")
    assert response.status_code == 200 and response.json()["count"] == 5
    with django_assert_num_queries(8):  # + the MLAgentBench research-task runs, + the split selector
        assert client.get("/?split=lite&pad=true").status_code == 200


def test_filters(client, board, staff):
    make_runs(22, [experiment("self", "llama")], verification=Run.Verification.SELF_REPORTED)
    agents = lambda url: {r["agent"] for r in client.get(url).json()["results"]}  # noqa: E731
    assert agents("/api/leaderboard/?split=lite") == {"aide", "mlab", "self"}
    assert agents("/api/leaderboard/?split=lite&agent=aid") == {"aide"}
    assert agents("/api/leaderboard/?split=lite&model=gpt") == {"mlab"}
    assert agents("/api/leaderboard/?split=lite&hardware=vCPU") == {"mlab"}
    assert agents("/api/leaderboard/?split=lite&verified=true") == {"aide", "mlab"}
    assert agents("/api/leaderboard/?split=medium") == set()
    assert client.get("/api/leaderboard/?split=nope").status_code == 400


def test_incomplete_seeds_only_count_when_padded(client, catalogue):
    make_runs(30, [experiment("partial")])  # seed 0 complete, seed 1 has 8 of 22
    row = client.get("/api/leaderboard/?split=lite").json()["results"][0]
    assert row["n_seeds"] == 1 and row["n_runs_in_split"] == 30
    padded = client.get("/api/leaderboard/?split=lite&pad=true").json()["results"][0]
    assert padded["n_seeds"] == 2


def test_private_runs_stay_out_for_other_users(client, catalogue, alice, bob):
    make_runs(22, [experiment("secret")], is_private=True, owner=alice)
    assert client.get("/api/leaderboard/?split=lite").json()["count"] == 0
    client.force_login(bob)
    assert client.get("/api/leaderboard/?split=lite").json()["count"] == 0
    client.force_login(alice)
    assert client.get("/api/leaderboard/?split=lite").json()["count"] == 1


def test_sorting(client, board):
    make_runs(22, [experiment("zeta")], medal_every=1)
    by_medal = [r["agent"] for r in client.get("/api/leaderboard/?split=lite").json()["results"]]
    assert by_medal[0] == "zeta"
    by_agent = [r["agent"] for r in client.get("/api/leaderboard/?split=lite&sort=agent").json()["results"]]
    assert by_agent == ["aide", "mlab", "zeta"]


def test_csv_and_json_exports(client, board):
    for url in ("/api/leaderboard/?split=lite&format=csv", "/?split=lite&format=csv"):
        response = client.get(url)
        assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert {r["agent"] for r in rows} == {"aide", "mlab"}
        assert {"any_medal_pct", "any_medal_sem", "gold_medal_pct", "n_seeds", "verification"} <= set(rows[0])
    data = client.get("/?split=lite&format=json").json()
    assert data["count"] == 2 and "cells" not in data["results"][0]


def test_cost_and_tokens_say_whether_the_gateway_metered_them(client, catalogue):
    metered, reported, mixed, unknown = (experiment(name) for name in ("metered", "reported", "mixed", "unknown"))
    make_runs(22, [metered], usage_metered=True)
    make_runs(22, [reported])
    runs = make_runs(22, [mixed])
    Run.objects.filter(pk__in=[r.pk for r in runs[:5]]).update(usage_metered=True)
    make_runs(22, [unknown], cost_usd=None, tokens_in=None, tokens_out=None, usage_metered=True)
    expected = {"metered": "metered", "reported": "self_reported", "mixed": "mixed", "unknown": ""}
    rows = {r["agent"]: r for r in client.get("/api/leaderboard/?split=lite").json()["results"]}
    assert {agent: row["usage"] for agent, row in rows.items()} == expected
    assert rows["unknown"]["cost_usd"] is None and rows["mixed"]["cost_usd"] == 1.5
    csv_rows = csv.DictReader(io.StringIO(client.get("/?split=lite&format=csv").content.decode()))
    assert {r["agent"]: r["usage"] for r in csv_rows} == expected
    page = client.get("/?split=lite").content.decode()
    cells = {agent: page.split(f">{agent}</a>", 1)[1].split("</tr>", 1)[0] for agent in expected}
    assert ">metered</span>" in cells["metered"] and ">self-reported</span>" in cells["reported"].split("$1.50")[1]
    assert ">partly metered</span>" in cells["mixed"] and "badge usage" not in cells["unknown"]
    assert ">metered<" not in cells["reported"] and "badge usage" in cells["reported"]


def test_page_renders_rows_filters_and_published_results(client, board):
    page = client.get("/?split=lite").content.decode()
    assert "aide" in page and "o1-preview" in page and 'id="leaderboard"' in page and "js/leaderboard.js" in page
    assert "Reported by the authors (not verified here)" in page
    assert "Disarray" in page and "90.91" in page  # the published Lite column
    all_split = client.get("/?split=all").content.decode()
    assert "77.78" in all_split


def test_experiment_page_shows_the_medal_grid(client, board):
    response = client.get(f"/experiments/{board[0].pk}/")
    page = response.content.decode()
    assert response.status_code == 200 and 'id="medal-grid"' in page
    assert "seed 2" in page and "gold" in page and "aerial-cactus-identification" in page


def test_empty_leaderboard_renders_for_anonymous(client, catalogue):
    response = client.get("/")
    assert response.status_code == 200 and b"No runs in this split yet" in response.content


def test_cost_frontier_chart_plots_priced_experiments(client, catalogue):
    import json
    import re

    make_runs(22, [experiment("cheap")], medal_every=2, cost_usd=1.0)  # 11 of 22 = 50%
    make_runs(22, [experiment("dear")], medal_every=1, cost_usd=4.0)  # 100%
    make_runs(22, [experiment("worse")], medal_every=11, cost_usd=5.0)  # 2 of 22, dearer: off the frontier
    html = client.get("/?split=lite").content.decode()
    figure = json.loads(re.search(r'<script id="cost-frontier-figure"[^>]*>(.*?)</script>', html, re.S).group(1))
    points, front = figure["data"]
    assert sorted(zip(points["x"], points["y"], strict=True)) == [(1.0, 50.0), (4.0, 100.0), (5.0, 9.09)]
    assert list(zip(front["x"], front["y"], strict=True)) == [(1.0, 50.0), (4.0, 100.0)]


def test_a_row_nobody_disclosed_says_not_disclosed_once_per_field(client, catalogue):
    silent, stated = experiment("silent-agent"), experiment("stated-agent")
    stated.disclosed_by, stated.internet = "uploader", "no"
    stated.save()
    make_runs(44, [silent, stated])
    html = client.get("/?split=lite").content.decode()
    rows = {name: re.sub(r"<[^>]+>|\s+", " ", row) for row in html.split("<tr>") for name in ("silent", "stated")
            if f"{name}-agent</a>" in row}
    assert "test signal: not disclosed" in rows["silent"]
    assert not re.search(r"not disclosed\s+not disclosed", rows["silent"])
    assert "stated by the uploader" in rows["stated"] and "internet: no" in rows["stated"]

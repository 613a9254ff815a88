"""The experiment page: per-split summaries and the pass@k-against-k curve, checked by hand."""

import json
import re

from leaderboard.models import Run, Split
from tests.web.test_leaderboard import experiment


def test_pass_at_k_curve_matches_a_hand_worked_case(client, catalogue):
    # Two competitions, three seeds. Competition A has a medal in 1 of 3 seeds, B in none:
    # pass@1 = (1/3 + 0)/2, pass@2 = (1 - C(2,2)/C(3,2) + 0)/2 = (2/3)/2, pass@3 = (1 + 0)/2.
    split = Split.objects.create(benchmark_id=catalogue.first().benchmark_id, slug="pair", name="Pair")
    a, b = catalogue.filter(slug__in=["spaceship-titanic", "leaf-classification"]).order_by("slug")
    split.competitions.set([a, b])
    e = experiment("aide")
    Run.objects.bulk_create([
        Run(experiment=e, competition=c, seed=seed, status=Run.Status.GRADED, valid_submission=True,
            any_medal=(c == a and seed == 2), gold_medal=(c == a and seed == 2))
        for c in (a, b) for seed in range(3)
    ])
    html = client.get(f"/experiments/{e.pk}/").content.decode()
    figure = json.loads(re.search(r'<script id="pass-at-k-figure"[^>]*>(.*?)</script>', html, re.S).group(1))
    [trace] = [t for t in figure["data"] if t["name"] == "Pair"]
    assert trace["x"] == [1, 2, 3]
    expected = [100 * (1 / 3) / 2, 100 * (2 / 3) / 2, 100 * 1 / 2]
    assert all(abs(got - want) < 1e-9 for got, want in zip(trace["y"], expected, strict=True))
    assert "pass@3" in html


def test_no_curve_without_complete_seeds(client, catalogue):
    e = experiment("lonely")
    Run.objects.create(experiment=e, competition=catalogue.get(slug="spaceship-titanic"), seed=0,
                       status=Run.Status.GRADED)
    html = client.get(f"/experiments/{e.pk}/").content.decode()
    assert "pass-at-k-figure" not in html


def test_runs_this_site_could_not_grade_do_not_count(client, catalogue):
    split = Split.objects.create(benchmark_id=catalogue.first().benchmark_id, slug="duo", name="Duo")
    a, b = catalogue.filter(slug__in=["spaceship-titanic", "leaf-classification"]).order_by("slug")
    split.competitions.set([a, b])
    e = experiment("half-graded")
    Run.objects.create(experiment=e, competition=a, seed=0, status=Run.Status.GRADED, any_medal=True)
    Run.objects.create(experiment=e, competition=b, seed=0, status=Run.Status.FAILED,
                       grading_error="answers not registered")
    rows = client.get("/api/leaderboard/?split=duo").json()["results"]
    [row] = [r for r in rows if r["experiment_id"] == e.pk]
    assert row["n_seeds"] == 0  # incomplete: the FAILED run is not a failed attempt
    padded = client.get("/api/leaderboard/?split=duo&pad=true").json()["results"]
    [row] = [r for r in padded if r["experiment_id"] == e.pk]
    assert row["n_seeds"] == 1 and row["any_medal_pct"] == 50.0  # padding counts the gap as a failure

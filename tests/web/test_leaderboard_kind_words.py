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


def _experiment_with_runs_on(competitions, name: str):
    from leaderboard.models import Agent, Experiment, LanguageModel, Run

    experiment = Experiment.objects.create(agent=Agent.objects.create(name=name),
                                           model=LanguageModel.objects.create(name=f"{name}-model"))
    for pct, competition in zip((40.0, 75.0), competitions, strict=False):
        Run.objects.create(experiment=experiment, competition=competition, status="graded", valid_submission=True,
                           score=0.5, human_rank=3, beats_human_pct=pct)
    return experiment


def _beaten_section(client, experiment) -> tuple[str, str]:
    page = client.get(f"/experiments/{experiment.pk}/").content.decode()
    section = page.split('id="humans-beaten"')[1].split("</section>")[0]
    figure = re.search(r'<script id="humans-beaten-figure" type="application/json">(.*?)</script>', section, re.S)
    return section, figure.group(1)


def test_experiment_chart_of_reference_leaderboards_says_baselines(smoke_root, client):
    from leaderboard.models import Competition

    import_catalogue(smoke_root, data_dir=smoke_root / "data")
    smoke = list(Competition.objects.filter(slug__startswith="smoke-").order_by("slug")[:2])
    assert smoke and all(c.has_reference_leaderboard for c in smoke)
    section, figure = _beaten_section(client, _experiment_with_runs_on(smoke, "on-smoke"))
    assert "Against the reference baselines" in section and "human teams" not in section
    assert "reference baselines beaten" in figure and "human" not in figure


def test_experiment_chart_of_kaggle_leaderboards_says_human_teams(catalogue, client):
    kaggle = list(catalogue.filter(benchmark__slug="mle-bench", n_teams__gt=0).order_by("slug")[:2])
    section, figure = _beaten_section(client, _experiment_with_runs_on(kaggle, "on-kaggle"))
    assert "Against the humans" in section and "human teams beaten" in figure and "baselines" not in figure


def test_experiment_chart_of_both_kinds_names_both(smoke_root, catalogue, client):
    from leaderboard.models import Competition

    import_catalogue(smoke_root, data_dir=smoke_root / "data")
    both = [Competition.objects.filter(slug__startswith="smoke-").order_by("slug")[0],
            catalogue.filter(benchmark__slug="mle-bench", n_teams__gt=0).order_by("slug")[0]]
    section, figure = _beaten_section(client, _experiment_with_runs_on(both, "on-both"))
    assert "Against the leaderboards" in section and "teams or baselines beaten" in figure


def test_run_page_thresholds_follow_the_leaderboard_kind(smoke_root, client):
    from leaderboard.models import Competition, Snapshot
    from leaderboard.runs.snapshots import refresh_timeline

    import_catalogue(smoke_root, data_dir=smoke_root / "data")
    smoke = Competition.objects.filter(slug__startswith="smoke-").order_by("slug")[0]
    run = _experiment_with_runs_on([smoke], "snap").runs.get()
    Snapshot.objects.create(run=run, elapsed_seconds=30.0, status="graded", score=0.4, valid_submission=True)
    refresh_timeline(run.pk)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "the lines are the reference leaderboard's" in page and "human leaderboard's medal" not in page


def test_comparing_experiments_on_reference_leaderboards_speaks_of_baselines(smoke_root, client):
    from leaderboard.models import Competition, Split

    import_catalogue(smoke_root, data_dir=smoke_root / "data")
    smoke = list(Competition.objects.filter(slug__startswith="smoke-").order_by("slug")[:2])
    split = Split.objects.filter(competitions__in=smoke).distinct().first()
    a, b = _experiment_with_runs_on(smoke, "left"), _experiment_with_runs_on(smoke, "right")
    page = client.get("/compare/experiments/", {"a": a.pk, "b": b.pk, "split": split.slug}).content.decode()
    assert "Reference baselines beaten (%)" in page and "A beats baselines %" in page
    summary = page.split('id="paired-summary"')[1].split("</table>")[0]
    assert "human" not in summary.lower()


def test_a_smoke_competition_never_speaks_of_kaggle_medals_and_links_its_public_files(smoke_root, client):
    import_catalogue(smoke_root, data_dir=smoke_root / "data")
    page = client.get("/competitions/smoke-wine/").content.decode()
    assert "Kaggle awarded" not in page and "medals against its reference baselines" in page
    links = re.findall(r'href="(/competitions/smoke-wine/data/[^"]+)"', page)
    assert sorted(link.rsplit("/", 1)[1] for link in links) == ["description.md", "sample_submission.csv",
                                                                "test.csv", "train.csv"]
    assert all(client.get(link).status_code == 200 for link in links)
    assert client.get("/competitions/smoke-wine/data/../private/answers.csv").status_code == 404

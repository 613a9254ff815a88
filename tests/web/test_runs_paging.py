"""`/api/runs/` pages by keyset: every run once, newest first, whatever arrives between pages."""

from __future__ import annotations

from django.core.cache import cache
from rest_framework.test import APIClient

from leaderboard.models import Run
from leaderboard.runs.experiments import ExperimentSpec, get_or_create_experiment


def make_runs(n: int, **fields) -> list[Run]:
    experiment = get_or_create_experiment(ExperimentSpec("a", "m"))
    return [Run.objects.create(experiment=experiment, task_name=f"t{i}", seed=i, status=Run.Status.GRADED, **fields)
            for i in range(n)]


def walk(client: APIClient, url: str) -> list[int]:
    ids = []
    while url:
        body = client.get(url).json()
        ids += [r["id"] for r in body["results"]]
        url = body["next"]
    return ids


def test_pages_cover_every_run_once_newest_first(db):
    cache.clear()
    runs = make_runs(7)
    client = APIClient()
    first = client.get("/api/runs/?limit=3").json()
    assert first["count"] == 7 and len(first["results"]) == 3 and first["previous"] is None
    ids = walk(client, "/api/runs/?limit=3")
    assert ids == sorted((r.pk for r in runs), reverse=True)


def test_a_run_added_while_paging_does_not_shift_the_pages(db):
    cache.clear()
    runs = make_runs(6)
    client = APIClient()
    first = client.get("/api/runs/?limit=3").json()
    make_runs(1)  # arrives between page 1 and page 2: an offset page would repeat a run
    rest = walk(client, first["next"])
    seen = [r["id"] for r in first["results"]] + rest
    assert seen == sorted((r.pk for r in runs), reverse=True)


def test_filters_still_apply_and_private_runs_stay_hidden(db, alice):
    cache.clear()
    make_runs(2)
    make_runs(2, is_private=True, owner=alice)
    assert len(walk(APIClient(), "/api/runs/?limit=1")) == 2
    client = APIClient()
    client.force_authenticate(alice)
    assert len(walk(client, "/api/runs/?limit=1")) == 4
    assert walk(client, "/api/runs/?status=pending") == []


def test_a_page_is_what_drf_would_write_in_one_query(catalogue, alice, django_assert_num_queries):
    """RunOutputSerializer builds its dict directly (speed); it must equal DRF's generic output for
    every kind of run: in or outside the catalogue, team or user or no owner, medals, missing numbers."""
    from rest_framework import serializers

    from leaderboard.api.runs import RunOutputSerializer
    from leaderboard.models import Competition, Team

    team = Team.objects.create(name="crew")
    team.members.add(alice)
    competition = Competition.objects.filter(splits__slug="low").first()
    solo = get_or_create_experiment(
        ExperimentSpec("a", "m", agent_version="2", hardware="1x A100", time_limit_hours=24), owner=alice)
    crew = get_or_create_experiment(ExperimentSpec("a", "m"), owner=team)
    Run.objects.create(experiment=solo, competition=competition, task_name=competition.slug, seed=3, owner=alice,
                       status=Run.Status.GRADED, score=0.25, submission_exists=True, valid_submission=True,
                       gold_medal=True, any_medal=True, human_rank=4, beats_human_pct=99.5, cost_usd=1.5,
                       tokens_in=10, tokens_out=20, n_steps=7, trajectory_format="aide", is_demo=True)
    Run.objects.create(experiment=crew, task_name="my-task", seed=0, status=Run.Status.FAILED, grading_error="no")
    make_runs(2)
    APIClient().get("/api/runs/")  # counts the runs once (the count is cached)
    with django_assert_num_queries(1):  # no column the page shows is left to load later
        page = APIClient().get("/api/runs/").json()["results"]
    assert len(page) == 4
    runs = {r.pk: r for r in Run.objects.select_related(
        "competition", "experiment__agent", "experiment__model", "experiment__owner", "experiment__team", "owner")}
    generic = RunOutputSerializer()
    for row in page:
        assert row == serializers.Serializer.to_representation(generic, runs[row["id"]])

"""`/api/runs/` pages by keyset: every run once, newest first, whatever arrives between pages."""

from __future__ import annotations

from django.core.cache import cache
from rest_framework.test import APIClient

from leaderboard.models import Run
from leaderboard.services import get_or_create_experiment


def make_runs(n: int, **fields) -> list[Run]:
    experiment = get_or_create_experiment(agent_name="a", agent_version="", model_name="m", hardware="")
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

"""The time curve counts a snapshot that is not graded yet (or whose grading failed) as no medal; each
point says how many of its runs still have such snapshots, in the JSON and the CSV."""

from __future__ import annotations

import csv
import io

import pytest
from rest_framework.test import APIClient

from leaderboard.models import Run, Snapshot
from tests.analysis.test_scaling_short_runs import short_world

pytestmark = pytest.mark.django_db


def test_points_count_runs_with_pending_and_failed_snapshots(catalogue):
    experiment = short_world(with_snapshots=True)
    runs = list(Run.objects.filter(experiment=experiment).order_by("id"))
    Snapshot.objects.create(run=runs[0], elapsed_seconds=20.0, status="pending", any_medal=True)
    Snapshot.objects.create(run=runs[1], elapsed_seconds=20.0, status="grading")
    Snapshot.objects.create(run=runs[1], elapsed_seconds=35.0, status="failed", grading_error="boom")
    Snapshot.objects.create(run=runs[2], elapsed_seconds=35.0, status="failed", grading_error="boom")
    data = APIClient().get("/api/scaling/time/", {"split": "short-test", "hours": "0.0025,0.00625,0.01"}).json()
    points = {round(p["hours"] * 3600): p for p in data["experiments"][0]["points"]}
    assert (points[9]["runs_with_pending_snapshots"], points[9]["runs_with_failed_snapshots"]) == (0, 0)
    assert (points[22]["runs_with_pending_snapshots"], points[22]["runs_with_failed_snapshots"]) == (2, 0)
    assert (points[36]["runs_with_pending_snapshots"], points[36]["runs_with_failed_snapshots"]) == (2, 2)
    assert points[22]["any_medal_pct"] == 0.0  # the pending snapshot's medal is not counted before it is graded
    body = APIClient().get("/api/scaling/time/", {"split": "short-test", "hours": "0.01", "format": "csv"})
    row = next(csv.DictReader(io.StringIO(body.content.decode())))
    assert row["runs_with_pending_snapshots"] == "2" and row["runs_with_failed_snapshots"] == "2"


def test_the_page_explains_ungraded_snapshots(catalogue, client):
    short_world(with_snapshots=True)
    page = client.get("/scaling/time/", {"split": "short-test"}).content.decode()
    assert "counts as no medal" in page and 'id="scaling-incomplete"' in page
    assert "<th>runs_with_pending_snapshots</th>" in page

"""Submission snapshots: in through a run folder, the upload form, the API and a runner; graded like
the final submission (an invalid one is graded invalid, no medal); bad names refused clearly."""

from __future__ import annotations

import json
import math

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse
from rest_framework.test import APIClient

from leaderboard.competitions import medals
from leaderboard.models import Artifact, Run, Snapshot
from leaderboard.runs import snapshots
from leaderboard.runs.artifacts import UploadError
from leaderboard.runs.experiments import ExperimentSpec
from leaderboard.runs.submission import submit_run
from tests.runs.test_submission import answers_for, eager, submission  # noqa: F401 - eager is a fixture

GARBAGE = b"this,is\nnot,a,submission\n"


def _folder(tmp_path, files: dict[str, bytes]):
    root = tmp_path / "spaceship-titanic_0b6c7e2a-1f0e-4a59-9c3e-2c8a5d7c1e11"
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(content)
    (root / "logs").mkdir(exist_ok=True)
    (root / "logs" / "run.log").write_text("started\n")
    return root


def _graded(run: Run) -> list[Snapshot]:
    return list(Snapshot.objects.filter(run=run).order_by("elapsed_seconds"))


def test_a_run_folder_brings_its_snapshots_graded_like_the_final_submission(
    alice, catalogue, tmp_path, eager, django_capture_on_commit_callbacks  # noqa: F811
):
    answers_for(tmp_path, catalogue)
    folder = _folder(tmp_path, {
        "submission/submission.csv": submission(40).read(),
        "snapshots/1800.csv": submission(20).read(),
        "snapshots/3600.5.csv": GARBAGE,
        "snapshots/7200.csv": submission(40).read(),
    })
    with django_capture_on_commit_callbacks(execute=True):
        run = submit_run(owner=alice, competition="spaceship-titanic", experiment=ExperimentSpec("aide", "gpt-4o"),
                         run_folder=folder)
    run.refresh_from_db()
    thresholds = catalogue.get(slug="spaceship-titanic").thresholds()
    early, invalid, late = _graded(run)
    assert [s.elapsed_seconds for s in (early, invalid, late)] == [1800.0, 3600.5, 7200.0]
    assert all(s.status == Snapshot.Status.GRADED for s in (early, invalid, late))
    assert early.score == pytest.approx(0.5) and early.medals() == medals.award(0.5, thresholds)
    assert not early.any_medal
    assert invalid.submission_exists and not invalid.valid_submission and invalid.score is None
    assert not invalid.any_medal and invalid.medals() == medals.NO_MEDALS
    assert "invalid submission" in invalid.grading_error
    assert late.score == pytest.approx(1.0) and late.gold_medal and late.any_medal
    assert late.artifact.kind == Artifact.Kind.SNAPSHOT and late.artifact.name == "snapshots/7200.csv"
    assert run.status == Run.Status.GRADED and run.gold_medal  # the final submission is unaffected
    # The run keeps a copy of its graded snapshots for the time curve.
    assert json.loads(run.snapshot_timeline) == [[1800.0, 0], [3600.5, 0], [7200.0, 1]]


def test_the_upload_form_takes_snapshots_as_extra_files(
    client, alice, catalogue, tmp_path, eager, django_capture_on_commit_callbacks  # noqa: F811
):
    answers_for(tmp_path, catalogue)
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("upload-run"), {
            "competition": "spaceship-titanic", "agent": "aide", "model": "gpt-4o", "seed": 0, "gpu_count": 0,
            "submission": submission(40), "snapshots": [submission(30, "600.csv"), ContentFile(GARBAGE, "1200.csv")],
        })
    assert response.status_code == 302, response.content.decode()[:2000]
    run = Run.objects.get()
    first, second = _graded(run)
    assert (first.elapsed_seconds, first.score, first.valid_submission) == (600.0, pytest.approx(0.75), True)
    assert (second.elapsed_seconds, second.valid_submission, second.any_medal) == (1200.0, False, False)
    page = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert 'id="snapshots-chart"' in page and '"gold' in page  # thresholds drawn as lines


def test_the_api_takes_snapshots_and_refuses_bad_names(alice, catalogue, tmp_path, eager,  # noqa: F811
                                                       django_capture_on_commit_callbacks):
    answers_for(tmp_path, catalogue)
    api = APIClient()
    api.force_authenticate(alice)
    fields = {"competition": "spaceship-titanic", "agent": "aide", "model": "gpt-4o", "seed": "1"}
    bad = api.post("/api/runs/", {**fields, "submission": submission(40),
                                  "snapshots": [submission(40, "one-hour.csv")]}, format="multipart")
    assert bad.status_code == 400 and "non-negative finite number" in str(bad.json())
    assert not Run.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        ok = api.post("/api/runs/", {**fields, "submission": submission(40),
                                     "snapshots": [submission(40, "90.csv"), submission(10, "45.25.csv")]},
                      format="multipart")
    assert ok.status_code == 201, ok.content
    run = Run.objects.get(pk=ok.json()["id"])
    assert [(s.elapsed_seconds, s.status) for s in _graded(run)] == [(45.25, "graded"), (90.0, "graded")]


@pytest.mark.parametrize("name", ["-5.csv", "inf.csv", "nan.csv", "1e3.csv", "abc.csv", "60.txt", ".csv", "1,5.csv"])
def test_bad_snapshot_names_are_refused_with_the_rule(name):
    with pytest.raises(snapshots.SnapshotError, match="non-negative finite number"):
        snapshots.elapsed_from_name(name)


def test_good_names_and_canonical_names():
    assert snapshots.elapsed_from_name("snapshots/3600.csv") == 3600.0
    assert snapshots.elapsed_from_name("0.5.CSV") == 0.5 and snapshots.elapsed_from_name(".5.csv") == 0.5
    assert snapshots.name_for(3600.0) == "snapshots/3600.csv" and snapshots.name_for(90.25) == "snapshots/90.25.csv"
    with pytest.raises(snapshots.SnapshotError, match="both at 60 s"):
        snapshots.check_times(["60.csv", "60.0.csv"])


def test_a_folder_with_a_badly_named_snapshot_is_refused_and_leaves_nothing(alice, catalogue, tmp_path):
    folder = _folder(tmp_path, {"submission/submission.csv": submission(40).read(),
                                "snapshots/final.csv": submission(40).read()})
    with pytest.raises(UploadError, match="'final.csv'.*non-negative finite number"):
        submit_run(owner=alice, competition="spaceship-titanic", experiment=ExperimentSpec("aide", "gpt-4o"),
                   run_folder=folder)
    assert not Run.objects.exists() and not Artifact.objects.exists()


def test_the_form_refuses_bad_snapshot_names(client, alice, catalogue):
    client.force_login(alice)
    response = client.post(reverse("upload-run"), {
        "competition": "spaceship-titanic", "agent": "aide", "model": "gpt-4o", "seed": 0, "gpu_count": 0,
        "submission": submission(40), "snapshots": [submission(40, "later.csv")],
    })
    assert response.status_code == 200 and "non-negative finite number" in response.content.decode()
    assert not Run.objects.exists()


def test_a_runner_adds_live_snapshots(alice, catalogue, tmp_path, eager,  # noqa: F811
                                      django_capture_on_commit_callbacks):
    answers_for(tmp_path, catalogue)
    run = _running_run(alice, catalogue)
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = snapshots.add_snapshot(run=run, elapsed_seconds=120.0, file=submission(40))
        snapshots.add_snapshot(run=run, elapsed_seconds=60, file=ContentFile(GARBAGE, name="x.csv"))
    snapshot.refresh_from_db()
    assert snapshot.status == Snapshot.Status.GRADED and snapshot.gold_medal
    assert snapshot.artifact.name == "snapshots/120.csv"
    assert [s.valid_submission for s in _graded(run)] == [False, True]
    with pytest.raises(snapshots.SnapshotError, match="already has a snapshot at 120 s"):
        snapshots.add_snapshot(run=run, elapsed_seconds=120, file=submission(40))
    for bad in (-1, math.inf, math.nan):
        with pytest.raises(snapshots.SnapshotError, match="non-negative finite"):
            snapshots.add_snapshot(run=run, elapsed_seconds=bad, file=submission(40))
    assert run.snapshots.count() == 2


def _running_run(owner, catalogue) -> Run:
    from leaderboard.runs.experiments import ExperimentSpec, get_or_create_experiment

    experiment = get_or_create_experiment(ExperimentSpec("aide", "gpt-4o"))
    return Run.objects.create(experiment=experiment, competition=catalogue.get(slug="spaceship-titanic"),
                              task_name="spaceship-titanic", owner=owner, status=Run.Status.RUNNING)


def test_snapshots_of_a_task_outside_the_catalogue_fail_with_the_reason(alice, catalogue, eager,  # noqa: F811
                                                                         django_capture_on_commit_callbacks):
    run = _running_run(alice, catalogue)
    run.competition = None
    run.save()
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = snapshots.add_snapshot(run=run, elapsed_seconds=5, file=submission(40))
    snapshot.refresh_from_db()
    assert snapshot.status == Snapshot.Status.FAILED and "not in the catalogue" in snapshot.grading_error

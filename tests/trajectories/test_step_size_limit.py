"""A huge step is stored cut with a visible note, and kept whole as an artifact of the run that only
those who may see the run can download; the replay page, compare view and steps API stay small."""

from __future__ import annotations

import hashlib

import orjson
import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from leaderboard.models import Artifact
from leaderboard.trajectories.importers import read_trajectories, save_steps
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.step_size import ARTIFACT_PREFIX, cut_step
from leaderboard.trajectories.store import StoredTrajectory
from tests.trajectories.import_support import make_run, stored_steps
from tests.trajectories.test_import_jsonl import write

MB = 1024 * 1024


def cut(step: StepData, field: int = 100, total: int = 300) -> bool:
    return cut_step(step, orjson.dumps({"text": step.text, "data": step.data}), "steps/x.json",
                    field=field, total=total)


def test_a_small_step_is_left_alone():
    step = StepData(index=0, kind="plan", text="x" * 100, data={"a": "y" * 100})
    assert not cut(step) and step.text == "x" * 100 and "truncated" not in step.data


def test_each_string_is_cut_to_the_field_limit_with_a_note():
    step = StepData(index=0, kind="command", text="t" * 150, data={"stdout": "é" * 80, "exit_code": 1,
                                                                 "nested": [{"deep": "d" * 500}]})
    assert cut(step, field=100, total=1000)
    head, note = step.text.split("\n[truncated: ")
    assert head == "t" * 100 and note.endswith("; the full step is in artifact steps/x.json]")
    stdout = step.data["stdout"].split("\n[")[0]
    assert stdout == "é" * 50 and len(stdout.encode()) == 100  # whole characters, within the bytes
    assert step.data["nested"][0]["deep"].startswith("d" * 100 + "\n[truncated")
    assert step.data["exit_code"] == 1 and step.data["truncated"]["name"] == "steps/x.json"
    assert step.raw is None  # serialised again, cut


def test_the_step_limit_bounds_the_strings_together():
    step = StepData(index=0, kind="plan", text="a" * 90, data={"b": "b" * 90, "c": "c" * 90, "d": "d" * 90})
    assert cut(step, field=100, total=200)
    assert step.text == "a" * 90 and step.data["b"] == "b" * 90  # 180 of the 200
    assert step.data["c"].startswith("c" * 20 + "\n[truncated") and step.data["d"].startswith("\n[truncated")


def test_data_too_big_without_long_strings_becomes_the_note():
    step = StepData(index=0, kind="plan", text="", data={"numbers": list(range(1000))})  # > 2 x 300 bytes
    assert cut(step)
    assert set(step.data) == {"note", "truncated"} and step.data["note"].startswith("[truncated: ")


@pytest.fixture
def huge_run(db, tmp_path, settings):
    settings.STEP_FIELD_LIMIT, settings.STEP_LIMIT = MB, 4 * MB
    settings.MEDIA_ROOT = tmp_path / "media"  # the 50 MB artifact goes with the test's folder
    stdout = "0123456789abcdef" * (50 * MB // 16)  # a 50 MB step
    path = write(tmp_path / "t.jsonl", {"task": "t"}, [
        {"kind": "plan", "text": "before"},
        {"kind": "command", "text": "ran it", "data": {"command": "cat big", "stdout": stdout, "exit_code": 0}},
        {"kind": "plan", "text": "after"},
    ])
    run = make_run()
    [parsed] = read_trajectories(path)
    save_steps(run, parsed)
    return run, stdout


def test_a_50_mb_step_is_stored_cut_and_kept_whole_as_an_artifact(huge_run):
    run, stdout = huge_run
    before, big, after = stored_steps(run)
    assert (before.text, after.text) == ("before", "after")
    assert big.data["stdout"].startswith(stdout[:1000]) and len(big.data["stdout"]) < MB + 200
    assert "[truncated: " in big.data["stdout"] and big.data["command"] == "cat big"
    [artifact] = Artifact.objects.filter(run=run, name__startswith=ARTIFACT_PREFIX)
    assert big.data["truncated"] == {"bytes": artifact.size, "name": artifact.name, "artifact": artifact.pk}
    with default_storage.open(artifact.file.name, "rb") as f:
        whole = f.read()
    assert orjson.loads(whole)["data"]["stdout"] == stdout
    assert artifact.sha256 == hashlib.sha256(whole).hexdigest()
    run.refresh_from_db()
    assert any("step 1:" in w and artifact.name in w for w in run.import_warnings)
    assert default_storage.size(StoredTrajectory.of(run).file) < 2 * MB


def test_pages_and_the_api_stay_small_and_the_artifact_downloads_for_those_who_see_the_run(huge_run, client,
                                                                                           alice, bob):
    run, stdout = huge_run
    run.owner, run.is_private = alice, True
    run.save()
    artifact = Artifact.objects.get(run=run, name__startswith=ARTIFACT_PREFIX)
    download = reverse("run-artifact", args=[run.pk, artifact.pk])
    client.force_login(alice)
    page = client.get(reverse("run-detail", args=[run.pk]))
    assert page.status_code == 200 and len(page.content) < 200_000
    assert "stored cut to the step size limit" in page.content.decode() and download in page.content.decode()
    api = client.get(reverse("run-steps", args=[run.pk]))
    assert api.status_code == 200 and len(api.content) < 2 * MB
    compare = client.get("/compare/", {"runs": f"{run.pk},{run.pk}"})
    assert compare.status_code == 200 and len(compare.content) < 400_000
    whole = b"".join(client.get(download).streaming_content)
    assert orjson.loads(whole)["data"]["stdout"] == stdout
    client.force_login(bob)
    assert client.get(download).status_code == 404


def test_importing_again_replaces_the_kept_steps(huge_run, django_capture_on_commit_callbacks, tmp_path):
    run, _ = huge_run
    old = Artifact.objects.get(run=run, name__startswith=ARTIFACT_PREFIX).file.name
    [parsed] = read_trajectories(write(tmp_path / "small.jsonl", {"task": "t"}, [{"kind": "plan", "text": "x"}]))
    with django_capture_on_commit_callbacks(execute=True):
        save_steps(run, parsed)
    assert not Artifact.objects.filter(run=run, name__startswith=ARTIFACT_PREFIX).exists()
    assert not default_storage.exists(old)


def test_a_running_runs_live_steps_are_cut_too(db, settings):
    from leaderboard.trajectories.store import LiveTrajectory

    settings.STEP_FIELD_LIMIT, settings.STEP_LIMIT = 1000, 4000
    run = make_run()
    live = LiveTrajectory(run)
    live.append([StepData(index=0, kind="plan", text="small"), StepData(index=1, kind="plan", text="x" * 100_000)])
    live.close()
    small, big = stored_steps(run)
    assert small.text == "small" and big.text.startswith("x" * 1000 + "\n[truncated: ")
    assert "steps/step-1-full.json (once the run ends)" in big.text

"""A research job's run downloaded as an MLAgentBench log folder (zip): MLAgentBench's own eval.py
logic (run_eval, written out independently in tests/research_support.py) run over it with the task's
eval.py gives the site's scores, final and per step; the task's scripts and answers are never in it."""

from __future__ import annotations

import io
import zipfile

import pytest

from leaderboard.models import Run
from runner.backends.local import LocalBackend
from tests.research_support import load_eval, mlagentbench_run_eval
from tests.runner import test_research_jobs
from tests.runner.test_research_jobs import TASK, run_job

research_world = test_research_jobs.research_world  # the fixture: the task imported, a local runner


def exported(client, run: Run, tmp_path) -> tuple[zipfile.ZipFile, object]:
    response = client.get(f"/runs/{run.pk}/mlagentbench.zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    archive.extractall(tmp_path / "export")
    return archive, tmp_path / "export"


def test_mlagentbench_eval_gives_the_sites_scores_on_an_exported_job_run(alice, client, research_world, tmp_path,
                                                                         settings, django_capture_on_commit_callbacks):
    run = run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks, steps=4, sleep=0.5)
    client.force_login(alice)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f'href="/runs/{run.pk}/mlagentbench.zip"' in page
    archive, folder = exported(client, run, tmp_path)

    task_dir = settings.RESEARCH_DIR / TASK
    (result,) = mlagentbench_run_eval(folder, load_eval(task_dir).get_score).values()
    steps = list(run.snapshots.filter(artifact__isnull=False).order_by("elapsed_seconds"))
    assert len(steps) >= 2
    assert result["final_score"] == pytest.approx(run.score)
    # run_eval: each step's score (0 where its eval raised), then the final one
    assert result["score"] == pytest.approx([s.score if s.score is not None else 0 for s in steps] + [run.score])
    assert result["total_time"] == pytest.approx(run.duration_s)
    assert result["submitted_final_answer"] and not any(result["extra"].values())

    names = archive.namelist()
    assert f"run-{run.pk}/env_log/traces/step_final_files/train.py" in names
    scripts = {(task_dir / "scripts" / name).read_bytes() for name in ("eval.py", "research_problem.txt",
                                                                         "read_only_files.txt")}
    assert not [n for n in names if "scripts/" in n or n.endswith(("eval.py", "answer.csv", "train.csv", "test.csv"))]
    assert not [n for n in names if not n.endswith("/") and archive.read(n) in scripts]


def test_a_private_run_is_not_exported_to_others(alice, bob, client, research_world,
                                                 django_capture_on_commit_callbacks):
    run = run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks)
    Run.objects.filter(pk=run.pk).update(is_private=True)
    client.force_login(bob)
    assert client.get(f"/runs/{run.pk}/mlagentbench.zip").status_code == 404

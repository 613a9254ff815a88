"""A real MLAgentBench log folder layout (its Environment's, with a task made here) imported onto the
research task: scored per step by the task's eval.py on a runner, the same numbers MLAgentBench's own
run_eval (written out independently in tests/research_support.py) gives on the folder; its export
gives run_eval the same numbers again; the API takes the folder zipped."""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from leaderboard.analysis.research import THRESHOLDS, research_results
from leaderboard.models import Run
from leaderboard.runs import research_traces
from runner.backends.local import LocalBackend
from runner.research.traces import score_trace
from tests.competitions.research_fixture import build_task, expected_scores
from tests.research_support import load_eval, mlagentbench_run_eval, write_mlagentbench_log

TASK = "tiny-accuracy"
PLAN = [("List Files", 0.0, None), ("Execute Script", 12.5, False), ("Edit Script (AI)", 30.0, True),
        ("Execute Script", 41.0, True), ("Edit Script (AI)", 50.0, None), ("Final Answer", 58.0, False)]


@pytest.fixture
def task_dir(db, tmp_path, settings, fast_jobs, monkeypatch):
    settings.RESEARCH_DIR = tmp_path / "stored"
    build_task(tmp_path / "tasks", TASK)
    call_command("import_research_tasks", str(tmp_path / "tasks" / TASK), "--baseline-score",
                 str(expected_scores()[0]), stdout=io.StringIO())
    monkeypatch.setattr("webapp.queue.publish", lambda *a, **k: object())
    return settings.RESEARCH_DIR / TASK


def plot_py_best_success(scores: list, baseline: float, threshold: float) -> bool:
    """plot.py's best-step success: the highest step score > 0 (higher is better here) above the threshold."""
    positive = [s for s in scores if s is not None and s > 0]
    return bool(positive) and (max(positive) - baseline) / baseline > threshold


def test_the_sites_scores_are_mlagentbench_run_evals(tmp_path, task_dir, client, django_capture_on_commit_callbacks):
    log = write_mlagentbench_log(tmp_path / "logs" / "run-0", task_dir, PLAN, final=False, overall_time=61.5)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_run", str(log), "--competition", TASK, "--agent", "ResearchAgent", "--model", "m",
                     stdout=io.StringIO())
    run = Run.objects.latest("pk")
    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.GRADED
    run.refresh_from_db()
    get_score = load_eval(task_dir).get_score
    (theirs,) = mlagentbench_run_eval(tmp_path / "logs", get_score).values()

    assert run.score == pytest.approx(theirs["final_score"])
    ours = [s.score for s in run.snapshots.filter(artifact__isnull=False).order_by("elapsed_seconds")]
    assert [s if s is not None else 0 for s in ours] + [run.score] == pytest.approx(theirs["score"])
    assert run.duration_s == theirs["total_time"] and run.agent_steps == len(PLAN)
    assert not theirs["extra"]["error"] and run.failure_classes == []

    baseline = expected_scores()[0]
    (stats,) = research_results(Run.objects.filter(pk=run.pk).select_related("competition", "experiment"))
    for threshold in THRESHOLDS:
        final_success = (theirs["final_score"] - baseline) / baseline > threshold
        assert stats.success_at[round(100 * threshold)] == (100.0 if final_success else 0.0)
        best = plot_py_best_success(theirs["score"], baseline, threshold)
        assert stats.best_success_at[round(100 * threshold)] == (100.0 if best else 0.0)
    assert stats.best_success_at[10] == 100.0 and stats.success_at[10] == 0.0  # the case that tells them apart

    # exported again, run_eval reads the same numbers from our folder
    response = client.get(f"/runs/{run.pk}/mlagentbench.zip")
    zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).extractall(tmp_path / "export")
    (again,) = mlagentbench_run_eval(tmp_path / "export", get_score).values()
    for key in ("score", "final_score", "total_time", "submitted_final_answer", "extra"):
        assert again[key] == pytest.approx(theirs[key]) if key != "extra" else again[key] == theirs[key], key


def test_the_api_takes_the_log_folder_zipped_and_a_runner_scores_it(tmp_path, task_dir, alice,
                                                                    django_capture_on_commit_callbacks):
    from tests.api.test_runs import token_client

    folder = write_mlagentbench_log(tmp_path / "run-1", task_dir, PLAN[:3], final=True)
    archive = Path(shutil.make_archive(str(tmp_path / "log"), "zip", root_dir=tmp_path, base_dir=folder.name))
    with django_capture_on_commit_callbacks(execute=True):
        response = token_client(alice).post("/api/runs/", {
            "competition": TASK, "agent": "ResearchAgent", "model": "m",
            "trajectory_files": [SimpleUploadedFile("log.zip", archive.read_bytes())]}, format="multipart")
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert run.status == Run.Status.PENDING and research_traces.is_trace_to_score(run)
    assert set(run.artifacts.filter(name__startswith="workspace-snapshots/").values_list("name", flat=True)) == {
        "workspace-snapshots/0.zip", "workspace-snapshots/12.5.zip", "workspace-snapshots/30.zip"}
    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.GRADED
    run.refresh_from_db()
    assert run.score == pytest.approx(expected_scores()[1]) and run.verification == Run.Verification.VERIFIED


def test_a_lone_trace_without_files_has_no_export(tmp_path, task_dir, client, django_capture_on_commit_callbacks):
    log = write_mlagentbench_log(tmp_path / "run-2", task_dir, PLAN[:2], final=True)
    lone = tmp_path / "trace.json"
    shutil.copy(log / "env_log" / "trace.json", lone)
    call_command("import_run", str(lone), "--competition", TASK, "--agent", "ResearchAgent", "--model", "m",
                 "--score", "0.7", stdout=io.StringIO())
    run = Run.objects.latest("pk")
    assert run.verification == Run.Verification.SELF_REPORTED and not research_traces.is_trace_to_score(run)
    assert "mlagentbench.zip" not in client.get(f"/runs/{run.pk}/").content.decode()
    assert client.get(f"/runs/{run.pk}/mlagentbench.zip").status_code == 404

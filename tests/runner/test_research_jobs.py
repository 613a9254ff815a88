"""A job on a research task: the agent works in a copy of env/ (its current folder), the final
workspace is stored and scored by the task's eval.py in the grading sandbox, snapshots of the
workspace are scored as it goes, an agent that edits a read-only file is flagged, and one that looks
for the task's scripts finds nothing; on the local backend and under Docker, on the loopback runner (the
site's research grading side runs eval.py on what it uploaded)."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from leaderboard.analysis import research as stats
from leaderboard.models import Artifact, Run
from runner.backends.local import LocalBackend
from runner.jobs.services import create_job
from runner.models import AgentDefinition, JobTask
from tests.competitions.research_fixture import build_task, expected_scores
from tests.remote_runner_support import LoopRunner

AGENT = Path(__file__).resolve().parents[1] / "job_agents" / "research_agent.py"
TASK = "tiny-accuracy"


def import_research_world(tmp_path, settings) -> None:
    """The tiny research task imported (its baseline given) and the scripted research agent."""
    settings.RESEARCH_DIR = tmp_path / "stored"
    settings.RESEARCH_SNAPSHOT_EVERY_S = 0.3
    build_task(tmp_path / "tasks", TASK)
    call_command("import_research_tasks", str(tmp_path / "tasks" / TASK), "--baseline-score",
                 str(expected_scores()[0]), stdout=io.StringIO())
    AgentDefinition.objects.update_or_create(name="research-scripted", defaults={
        "command": [sys.executable, str(AGENT)], "image": ""})


@pytest.fixture
def research_world(loopback_runner, tmp_path, settings):
    import_research_world(tmp_path, settings)
    return loopback_runner


def run_job(user, runner: LoopRunner, backend, django_capture_on_commit_callbacks, minutes=1.0,
            expect=JobTask.Status.SUCCEEDED, task=TASK, env=None, **agent_settings) -> Run:
    job = create_job(user=user, agent="research-scripted", competitions=[task], seeds=1,
                     time_limit_minutes=minutes, settings=agent_settings, env=env)
    task = job.tasks.get()
    outcome = runner.run_graded(task.pk, backend)
    task.refresh_from_db()
    assert task.status == expect, (outcome.error, task.log_tail)
    return Run.objects.get(pk=task.run_id)


def artifact_text(run: Run, name: str) -> str:
    artifact = run.artifacts.get(name=name)
    with artifact.file.open("rb") as f:
        return f.read().decode()


def check_graded_run(run: Run) -> None:
    baseline, improved = expected_scores()
    assert run.status == Run.Status.GRADED and run.verification == Run.Verification.VERIFIED
    assert run.score == pytest.approx(improved) and run.valid_submission and not run.grading_error
    gain = stats.improvement(run.score, run.competition.baseline_score, lower_is_better=False)
    assert gain == pytest.approx((improved - baseline) / baseline) and stats.research_success(gain)
    names = set(run.artifacts.values_list("kind", "name"))
    assert {(Artifact.Kind.CODE, "workspace/train.py"), (Artifact.Kind.CODE, "workspace/submission.csv")} <= names
    assert not {n for _, n in names if n in ("workspace/train.csv", "workspace/test.csv")}  # read-only: not again
    assert "> 1.0" in artifact_text(run, "workspace/train.py")
    assert run.grading_report["research"]["eval"] == "scripts/eval.py get_score"


def test_a_research_job_is_scored_by_eval_py_with_snapshots_over_time(alice, research_world,
                                                                     django_capture_on_commit_callbacks):
    run = run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks, steps=4, sleep=0.5)
    check_graded_run(run)
    assert run.failure_classes == []
    snapshots = list(run.snapshots.order_by("elapsed_seconds"))
    assert len(snapshots) >= 3 and all(s.status == "graded" for s in snapshots)
    scores = [s.score for s in snapshots]
    assert scores[-1] == pytest.approx(expected_scores()[1]) and scores[0] < scores[-1]
    assert run.snapshot_timeline  # the time curve reads it
    kept = [s for s in snapshots if s.artifact_id]  # MLAgentBench's step_<n>_files: each snapshot's files
    assert len(kept) == len(snapshots) - 1  # all but the final point, which is the stored workspace itself
    with kept[-1].artifact.file.open("rb") as f, zipfile.ZipFile(f) as zf:
        assert "train.py" in zf.namelist() and "train.csv" not in zf.namelist()  # read-only files left out
        assert zf.read("submission.csv").startswith(b"id,label")
    assert not run.findings.exists()


def test_an_agent_that_edits_a_read_only_file_is_flagged(alice, research_world, django_capture_on_commit_callbacks):
    run = run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks, edit_read_only=True)
    finding = run.findings.get()
    assert finding.check_name == "read-only-files" and finding.evidence == {"files": ["train.csv: changed"]}
    assert any("read-only" in note and "train.csv" in note for note in run.import_warnings)
    assert run.score == pytest.approx(expected_scores()[1])  # graded with train.csv as the task gave it


def test_an_agent_that_looks_for_the_scripts_finds_nothing(alice, research_world, django_capture_on_commit_callbacks):
    run = run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks, look_for_scripts=True)
    assert json.loads(artifact_text(run, "logs/found.json")) == []
    task = JobTask.objects.get(run=run)
    assert "problem: Improve the test accuracy" in task.log_tail


def test_a_starter_left_alone_is_no_success(alice, research_world, django_capture_on_commit_callbacks):
    run = run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks, improve=False)
    assert run.score == pytest.approx(expected_scores()[0])
    gain = stats.improvement(run.score, run.competition.baseline_score, lower_is_better=False)
    assert gain == pytest.approx(0.0) and not stats.research_success(gain)


def test_mlagentbench_failure_classes_of_a_job(alice, research_world, django_capture_on_commit_callbacks):
    oom = run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks,
                  expect=JobTask.Status.FAILED, say="RuntimeError: CUDA out of memory. Tried to allocate 2 GiB",
                  exit=1)
    # A crash is MLAgentBench's "error" class: its workspace is still scored by eval.py (kept on the run), but
    # the run is left out of the statistics (plot.py drops it), and it never gave a final answer.
    assert oom.failure_classes == ["error", "out_of_memory", "no_final_answer"]
    assert oom.score == pytest.approx(expected_scores()[1]) and not oom.valid_submission
    assert stats.research_outcome(oom) == (None, None)
    late = run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks, minutes=3 / 60,
                   expect=JobTask.Status.TIMED_OUT, say="openai.APIConnectionError: Connection error.", hang=60)
    assert late.failure_classes == ["llm_connection", "no_final_answer"]
    page = APIClient().get(f"/api/runs/{late.pk}/").json()
    # connection errors: plot.py leaves the run out of its statistics, so it has no success either way
    assert page["failure_classes"] == ["llm_connection", "no_final_answer"] and page["success"] is None


def test_links_and_fifos_in_the_workspace_are_never_followed(alice, research_world,
                                                            django_capture_on_commit_callbacks):
    run = run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks, plant_links=True)
    assert run.status == Run.Status.GRADED and run.score is None and not run.valid_submission
    assert "eval.py: FileNotFoundError" in run.grading_error  # the eval saw no submission.csv at all
    assert not run.artifacts.filter(name__in=["workspace/submission.csv", "workspace/pipe"]).exists()
    assert any("submission.csv" in note and "link" in note for note in run.import_warnings)
    assert "root:" not in "".join(artifact_text(run, a.name) for a in run.artifacts.filter(kind=Artifact.Kind.CODE))


def test_what_the_eval_quotes_of_the_workspace_is_redacted(alice, research_world, tmp_path,
                                                          django_capture_on_commit_callbacks):
    quoting = ("import csv, os\n\ndef get_score(folder):\n"
               "    rows = list(csv.DictReader(open(os.path.join(folder, 'submission.csv'))))\n"
               "    raise ValueError('cannot read label ' + rows[0]['label'])\n")
    build_task(tmp_path / "more", "tiny-quoting", eval_source=quoting)
    call_command("import_research_tasks", str(tmp_path / "more" / "tiny-quoting"), "--baseline-score", "0.5",
                 stdout=io.StringIO())
    secret = "sk-research-0123456789"
    run = run_job(alice, research_world, LocalBackend(), django_capture_on_commit_callbacks, task="tiny-quoting",
                  env={"MY_TOKEN": secret}, write_secret="MY_TOKEN")
    assert "cannot read label" in run.grading_error and secret not in run.grading_error
    assert run.score is None and secret not in artifact_text(run, "workspace/submission.csv")


@pytest.mark.docker
def test_a_research_job_under_docker(alice, research_world, docker_backend, django_capture_on_commit_callbacks):
    AgentDefinition.objects.filter(name="research-scripted").update(command=["python3", "-c", AGENT.read_text()])
    run = run_job(alice, research_world, docker_backend, django_capture_on_commit_callbacks, edit_read_only=True,
                  look_for_scripts=True)
    check_graded_run(run)
    assert json.loads(artifact_text(run, "logs/found.json")) == []
    assert not run.findings.exists()  # mounted read-only: the edit failed
    assert "train.csv is read-only here" in JobTask.objects.get(run=run).log_tail

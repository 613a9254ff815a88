"""A research task (MLAgentBench's layout) on a runner attached with only the site's URL and a token:
the runner gets the task's env/ through the data endpoint (by hash, verified, cached), runs the
agent in a workspace copied from it, keeps snapshots of it and uploads them with the final
workspace; the site's research grading side (a worker on the research queue, where the task's
scripts/ are) scores them with the task's own eval.py. Nothing of scripts/ is ever served to the
runner: the data endpoint refuses every file of it, and the runner's folders hold none."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import requests

from leaderboard.models import Run
from runner.jobs.services import create_job
from runner.models import AgentDefinition, JobTask, Runner
from tests.competitions.research_fixture import expected_scores
from tests.job_support import WorkerProcess, needs_agent_tools, wait_until
from tests.remote_runner_support import RemoteRunner, new_token
from tests.research_support import import_tiny_task

pytestmark = [needs_agent_tools, pytest.mark.serial]
AGENT = Path(__file__).resolve().parents[1] / "job_agents" / "research_agent.py"
TASK = "tiny-accuracy"


@pytest.fixture
def research_site(transactional_db, tmp_path, settings):
    """The tiny research task imported on the site, the scripted research agent, and the site's
    research grading side: a worker on a research queue of this test's own (no runner takes jobs there)."""
    settings.RESEARCH_SNAPSHOT_EVERY_S = 0.3
    settings.RESEARCH_BASELINE_QUEUE = f"research-remote-test-{os.getpid()}"
    stored = import_tiny_task(tmp_path, settings)
    worker = WorkerProcess(
        tmp_path / "research-grading.log",
        settings.RESEARCH_BASELINE_QUEUE,
        extra_env={"MEDALBOARD_RESEARCH_BASELINE_QUEUE": settings.RESEARCH_BASELINE_QUEUE},
    )
    yield stored, worker
    worker.stop()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def research_job(user, runner_name: str, **agent_settings):
    """The job, made once the runner registered (its sandboxes take any image): no runner of the
    site's own is there to serve it."""
    wait_until(lambda: Runner.objects.filter(name=runner_name).exclude(images=[]).exists(), 60, "registered")
    return create_job(
        user=user,
        agent="research-scripted",
        competitions=[TASK],
        seeds=1,
        time_limit_minutes=1,
        settings=agent_settings,
    )


def scored(job, runner: RemoteRunner, worker: WorkerProcess, timeout: float = 120) -> tuple[JobTask, Run]:
    """The job's task run by the remote runner, then its run scored by the research grading side."""
    assert runner.wait(timeout) == 0, runner.output()
    task = JobTask.objects.select_related("runner").get(job=job)
    assert task.status == JobTask.Status.SUCCEEDED, (task.error, runner.output())
    run = wait_until(lambda: Run.objects.filter(pk=task.run_id, status=Run.Status.GRADED).first(), 90, "scored", worker)
    return task, run


def test_a_remote_runner_runs_a_research_task_the_site_scores_with_its_eval(
    live_server, alice, research_site, tmp_path
):
    stored, worker = research_site
    token = new_token("remote-research")
    host = tmp_path / "runner-host"
    runner = RemoteRunner(live_server.url, token, host, "--tasks", "1")
    job = research_job(alice, "remote-research", steps=4, sleep=0.5, look_for_scripts=True)
    task, run = scored(job, runner, worker)
    assert task.runner.name == "remote-research"
    _, improved = expected_scores()
    assert run.score == pytest.approx(improved) and run.valid_submission and not run.grading_error, worker.output()
    assert run.verification == Run.Verification.VERIFIED and run.failure_classes == []
    assert run.grading_report["research"]["eval"] == "scripts/eval.py get_score"
    assert run.grading_report["research"]["read_only_changes"] == []
    names = set(run.artifacts.values_list("name", flat=True))
    assert {"workspace/train.py", "workspace/submission.csv"} <= names
    assert not names & {"workspace/train.csv", "workspace/test.csv"}  # read-only: the task's, not kept again
    snapshots = list(run.snapshots.order_by("elapsed_seconds"))
    assert len(snapshots) >= 3 and all(s.status == "graded" for s in snapshots)
    assert snapshots[0].score < snapshots[-1].score == pytest.approx(improved)
    assert [s for s in snapshots if s.artifact_id]  # each snapshot's files, as its zip

    # The agent looked everywhere its sandbox names: no eval.py, no answer.csv
    with run.artifacts.get(name="logs/found.json").file.open("rb") as f:
        assert f.read() == b"[]"

    # Nothing of scripts/ is served: the data endpoint refuses each file of it by hash, while it
    # serves env/'s (the same request, the same token, the same task)
    scripts = [p for p in (stored / "scripts").rglob("*") if p.is_file()]
    assert {p.name for p in scripts} >= {"eval.py", "answer.csv"}
    auth = {"Authorization": f"Runner {token}"}
    url = f"{live_server.url}/api/runner/v1/tasks/{task.pk}/data/"
    assert requests.get(url + sha256(stored / "env" / "train.py") + "/", headers=auth, timeout=30).status_code == 200
    for path in scripts:
        answer = requests.get(url + sha256(path) + "/", headers=auth, timeout=30)
        assert answer.status_code == 404, (path.name, answer.status_code)
    # ... and the runner's folders hold no file of it (its cache keeps env/'s files by hash)
    secret_texts = {sha256(p): p.name for p in scripts if p.name != "answer.csv"}  # the agent's submission is
    # answer.csv's twin (it scores 1.0): only the cache is checked for that one
    held = [p for p in host.rglob("*") if p.is_file() and not p.is_symlink()]
    blobs = {p.name for p in (host / "work" / "cache" / "blobs").rglob("*") if p.is_file()}
    assert blobs and blobs >= {sha256(p) for p in (stored / "env").rglob("*") if p.is_file()}
    assert not blobs & {sha256(p) for p in scripts}
    assert not [p for p in held if sha256(p) in secret_texts or p.name in ("eval.py", "answer.csv")]
    assert "Traceback" not in runner.output()


def test_a_read_only_file_the_agent_edits_on_a_remote_runner_is_flagged_by_the_site(
    live_server, alice, research_site, tmp_path
):
    _, worker = research_site
    runner = RemoteRunner(live_server.url, new_token("remote-research"), tmp_path / "host", "--tasks", "1")
    _, run = scored(research_job(alice, "remote-research", edit_read_only=True), runner, worker)
    finding = run.findings.get()  # the runner saw the change; the site flags it
    assert finding.check_name == "read-only-files" and finding.evidence == {"files": ["train.csv: changed"]}
    assert run.score == pytest.approx(expected_scores()[1])  # scored with train.csv as the task gave it


@pytest.mark.docker
def test_a_remote_runner_runs_a_research_task_under_docker(live_server, alice, research_site, tmp_path):
    from django.conf import settings

    from runner.backends.docker import DockerBackend

    if not DockerBackend().image_exists(settings.MEDALBOARD_AGENT_IMAGE):
        pytest.skip(f"agent image {settings.MEDALBOARD_AGENT_IMAGE} not built (python manage.py build_agent_image)")
    _, worker = research_site
    # the agent inline: the image has Debian's python3, the test folder is not mounted
    AgentDefinition.objects.filter(name="research-scripted").update(command=["python3", "-c", AGENT.read_text()])
    name = f"remote-research-{os.getpid()}"
    runner = RemoteRunner(
        live_server.url, new_token(name), tmp_path / "host", "--tasks", "1", "--backend", "docker", "--name", name
    )
    job = research_job(alice, name, steps=2, sleep=0.5, edit_read_only=True, look_for_scripts=True)
    task, run = scored(job, runner, worker, timeout=240)
    assert "train.csv is read-only here" in task.log_tail  # mounted read-only by the runner's Docker
    assert run.score == pytest.approx(expected_scores()[1]) and run.valid_submission, run.grading_error
    assert not run.findings.exists()
    with run.artifacts.get(name="logs/found.json").file.open("rb") as f:
        assert f.read() == b"[]"
    assert run.recipe["sandbox"]["backend"] == "docker" and run.recipe["sandbox"]["attached"] == "api"
    assert DockerBackend(runner_name=name).client.containers.list(all=True, filters={"name": name}) == []

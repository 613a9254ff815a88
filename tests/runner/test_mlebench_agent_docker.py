"""An agent packaged as MLE-bench packages it, end to end in Docker (marker docker): imported from a
folder the test writes, its image built FROM mlebench-env (built here once if missing: minutes), one
variant run on the loopback runner (a runner attached by URL, which builds the package's image itself
when it has not got it). start.sh gets the variant's kwargs and env vars (the secret
resolved from the job's secrets), runs as nonroot with /home/instructions.txt, a read-only
/home/data and a checker at localhost:5000 that answers like MLE-bench's; the run is graded."""

from __future__ import annotations

import json

import pytest

from leaderboard.models import Run
from runner.agents.importer import import_agents
from runner.backends.docker import DockerBackend
from runner.jobs.services import create_job
from runner.models import JobTask
from tests.job_support import COMPETITION, needs_agent_tools
from tests.mlebench_agent_support import make_agents_dir

pytestmark = [pytest.mark.docker, needs_agent_tools]
SECRET = "probe-secret-value-41"


def _probe_record(run: Run) -> dict:
    artifact = run.artifacts.get(name="logs/probe.json")
    with artifact.file.open("rb") as handle:
        return json.loads(handle.read())


def _run_job(user, loopback, agent: str) -> tuple[JobTask, Run]:
    """One task of a 2-minute job of `agent`, on the loopback runner in Docker; it must succeed."""
    job = create_job(user=user, agent=agent, competitions=[COMPETITION], time_limit_minutes=2)
    task = job.tasks.get()
    outcome = loopback.run_graded(task.pk, DockerBackend(), timeout_s=900)
    task.refresh_from_db()
    assert outcome.status == JobTask.Status.SUCCEEDED, (outcome.error, task.log_tail)
    return task, Run.objects.get(pk=task.run_id)


def test_an_mlebench_agent_runs_in_docker_as_mlebench_runs_it(alice, loopback, mlebench_env, tmp_path):
    report = import_agents(make_agents_dir(tmp_path), build=True, log=lambda *a: None)
    assert sorted(report.created) == ["probe", "probe/omega"]
    backend = DockerBackend()
    image = report.images[0]["image"]
    assert backend.image_exists(image) and len(report.images) == 1  # both variants share one image
    job = create_job(user=alice, agent="probe/omega", competitions=[COMPETITION], time_limit_minutes=2,
                     env={"MY_KEY": SECRET})
    assert job.agent_version and job.agent_image == image
    task = job.tasks.get()
    outcome = loopback.run_graded(task.pk, backend, timeout_s=900)
    task.refresh_from_db()
    assert outcome.status == JobTask.Status.SUCCEEDED, (outcome.error, task.log_tail)
    run = Run.objects.get(pk=task.run_id)
    assert run.recipe["agent"]["image_id"] == backend.client.images.get(image).id
    assert run.recipe["agent"]["version"] == job.agent_version  # the folder's hash
    record = _probe_record(run)
    assert record["argv"] == ["steps=7", "mode=fast", "agent.code.model=big"]  # omegaconf key=value
    env = record["env"]
    # The secret reached the agent as its value: the stored copy has exactly that value redacted.
    assert env["PROBE_TOKEN"] == "[secret]" and SECRET not in json.dumps(record)
    assert env["STEP_LIMIT"] == "7" and env["EXTRA"] == "yes" and env["COMPETITION_ID"] == COMPETITION
    assert env["AGENT_DIR"] == "/home/agent" and env["SUBMISSION_DIR"] == "/home/submission"
    assert record["user"] == "nonroot" and record["uid"] != 0
    assert record["python"].startswith("/opt/conda/envs/agent/")  # `conda activate agent` worked
    assert record["agent_dir_writable"] and not record["data_writable"]
    assert "2 minutes" in record["instructions"] and "/home/submission/submission.csv" in record["instructions"]
    assert record["health"] == {"status": "running"}
    assert record["valid"] == {"result": "Submission is valid."}
    assert set(record["invalid"]) == {"result"} and record["invalid"]["result"].startswith("Submission invalid!")
    assert "score" not in json.dumps(record["valid"]).lower()
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None


def test_a_job_goes_only_to_runners_that_have_the_agents_image(alice, job_world, mlebench_env, tmp_path):
    from runner.jobs.registry import images_present
    from runner.jobs.services import JobError

    report = import_agents(make_agents_dir(tmp_path), build=True, log=lambda *a: None)
    image = report.images[0]["image"]
    assert image in images_present(DockerBackend())
    job_world.images = ["medalboard-agent:bookworm"]
    job_world.save()
    with pytest.raises(JobError, match=r"its image .* is not built on any runner .*build_agent_images probe"):
        create_job(user=alice, agent="probe", competitions=[COMPETITION], time_limit_minutes=1,
                   env={"MY_KEY": SECRET})
    job_world.images = images_present(DockerBackend())
    job_world.save()
    assert create_job(user=alice, agent="probe", competitions=[COMPETITION], time_limit_minutes=1,
                      env={"MY_KEY": SECRET}).agent_image == image


def test_the_shipped_sample_agent_imports_builds_runs_and_is_graded(alice, loopback, mlebench_env, settings):
    from pathlib import Path

    report = import_agents(Path(settings.BASE_DIR) / "agents", build=True, log=lambda *a: None)
    assert {"sample", "sample/copy-sample"} <= set(report.created + report.updated + report.unchanged)
    task, run = _run_job(alice, loopback, "sample")
    assert '{"result": "Submission is valid."}' in task.log_tail
    assert run.status == Run.Status.GRADED and run.valid_submission and run.trajectory.n_steps == 2


def test_an_agent_written_as_mlebench_writes_its_own_builds_and_runs(alice, loopback, mlebench_env, tmp_path):
    """The Dockerfile and start.sh habits of MLE-bench's aide, dummy and mlagentbench, on our base and
    its conda (tests/mlebench_agent_support.py: SHAPED_*)."""
    from tests.mlebench_agent_support import make_mlebench_shaped_dir

    import_agents(make_mlebench_shaped_dir(tmp_path), build=True, log=lambda *a: None)
    _, run = _run_job(alice, loopback, "shaped")
    with run.artifacts.get(name="logs/checks.txt").file.open("rb") as handle:
        checks = dict(line.split("=", 1) for line in handle.read().decode().splitlines())
    assert checks.pop("torch_rc") != "0" and checks.pop("private_rc") != "0"  # no torch; /private is root's
    assert checks == {
        "hook_python": "/opt/conda/envs/agent/bin/python", "cwd": "/home/agent/work",
        "args": "--max-time 60 --llm-name tiny", "data_rc": "0", "sed_rc": "0", "notes": "1", "home_left": "0",
        "activate_env": "agent", "run_prefix": "/opt/conda/envs/agent", "link_rc": "0",
        "validate": '{"result": "Submission is valid."}', "timeout_rc": "0", "code_rc": "0"}
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None


def test_build_agent_images_builds_on_the_runner_with_mlebenchs_build_args_and_reports_them(
        db, mlebench_env, tmp_path, monkeypatch, capsys):
    import uuid

    from django.core.management import call_command

    from runner.agents.mlebench import BUILD_ARGS
    from runner.models import AgentDefinition, Runner

    name = f"test-build-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("MEDALBOARD_RUNNER_NAME", name)  # the runner on this Docker host
    runner = Runner.objects.create(name=name, backend=Runner.Backend.DOCKER, images=["medalboard-agent:bookworm"])
    # Content of this test's own, so its tag is new and the build is real.
    agents = make_agents_dir(tmp_path, probe_py=f"print('built by {name}')\n")
    call_command("import_agents", str(agents), "--no-build")
    capsys.readouterr()
    tag = AgentDefinition.objects.get(name="probe").image
    backend = DockerBackend()
    assert not backend.image_exists(tag)
    try:
        call_command("build_agent_images", "probe/omega")
        assert json.loads(capsys.readouterr().out) == [
            {"image": tag, "built": True, "id": backend.client.images.get(tag).id}]
        env = dict(item.split("=", 1) for item in backend.client.images.get(tag).attrs["Config"]["Env"])
        assert {key: env[key] for key in BUILD_ARGS} == BUILD_ARGS  # the Dockerfile's ARGs, as MLE-bench gives them
        runner.refresh_from_db()
        assert tag in runner.images and "medalboard-agent:bookworm" in runner.images
        call_command("build_agent_images")  # every imported agent: the tag is there, kept
        assert json.loads(capsys.readouterr().out)[0]["built"] is False
    finally:
        if backend.image_exists(tag):
            backend.client.images.remove(tag, force=True)

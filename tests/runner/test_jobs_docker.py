"""A job task end to end in a real container (marker docker), on the loopback runner: it starts the agent
image, the agent's steps are streamed and its submission graded by the site, and inspecting the container
while it runs shows network none, exactly MLE-bench's mounts (the public data from the runner's cache),
and no answers path. The container is removed."""

from __future__ import annotations

import threading
import time

import docker.errors
import pytest
from django.conf import settings

from leaderboard.models import Run
from runner.backends import TOOLS_DIR
from runner.backends.docker import DockerBackend
from runner.models import AgentDefinition, JobTask
from tests.conftest import REQUIRE_SERVICES
from tests.job_support import SCRIPTED_AGENT, needs_agent_tools, scripted_job

pytestmark = [pytest.mark.docker, needs_agent_tools]


@pytest.fixture
def docker_agent(job_world):
    backend = DockerBackend()
    if not backend.image_exists(settings.MEDALBOARD_AGENT_IMAGE):
        message = f"agent image {settings.MEDALBOARD_AGENT_IMAGE} not built (python manage.py build_agent_image)"
        pytest.fail(message) if REQUIRE_SERVICES else pytest.skip(message)
    # The scripted test agent, passed inline: the image has Debian's python3, the test folder is not mounted.
    AgentDefinition.objects.filter(name="scripted").update(command=["python3", "-c", SCRIPTED_AGENT.read_text()])
    return backend


class Inspector(threading.Thread):
    """Waits for the container of the task's first attempt and records what Docker says about it while it
    runs (found by the end of its name, which the runner prefixes with its own name and its site's)."""

    def __init__(self, backend: DockerBackend, task_id: int) -> None:
        super().__init__(daemon=True)
        self.backend, self.suffix, self.info = backend, f"-task-{task_id}-a1", None

    def run(self) -> None:
        deadline = time.monotonic() + 60
        while self.info is None and time.monotonic() < deadline:
            found = [c for c in self.backend.client.api.containers(all=True, filters={"name": self.suffix})
                     if any(name.endswith(self.suffix) for name in c["Names"])]
            try:
                self.info = self.backend.client.api.inspect_container(found[0]["Id"]) if found else None
            except docker.errors.NotFound:
                pass
            time.sleep(0.1)

    def removed(self) -> bool:
        return not self.backend.client.api.containers(all=True, filters={"name": self.suffix})


def test_a_job_runs_in_a_locked_down_container(alice, loopback, docker_agent, tmp_path):
    job = scripted_job(alice, steps=3, sleep=0.5)
    task = job.tasks.get()
    inspector = Inspector(docker_agent, task.pk)
    inspector.start()
    outcome = loopback.run_graded(task.pk, docker_agent)
    inspector.join()
    assert outcome.status == JobTask.Status.SUCCEEDED, (outcome.error, JobTask.objects.get(pk=task.pk).log_tail)
    info = inspector.info
    assert info is not None, "the container was never seen"
    assert info["HostConfig"]["NetworkMode"] == "none" and info["Config"]["Image"] == settings.MEDALBOARD_AGENT_IMAGE
    mounts = {m["Destination"]: (m["Source"], m["RW"]) for m in info["Mounts"]}
    work = str((settings.RUNNER_WORK_DIR / f"task-{task.pk}-a1").resolve())
    data, writable = mounts.pop("/home/data")
    assert not writable and data.startswith(str((settings.RUNNER_WORK_DIR / "cache").resolve()))  # a verified copy
    assert mounts == {
        "/home/submission": (f"{work}/submission", True),
        "/home/logs": (f"{work}/logs", True),
        "/home/code": (f"{work}/code", True),
        "/opt/medalboard": (str(TOOLS_DIR), False),
    }
    assert not any("answers" in source for source, _ in mounts.values())
    env = dict(item.split("=", 1) for item in info["Config"]["Env"])
    assert env["SEED"] == "0" and env["COMPETITION_ID"] == "spaceship-titanic"
    assert env["DESCRIPTION_FILE"] == "/home/data/description.md"
    run = Run.objects.get(pk=JobTask.objects.get(pk=task.pk).run_id)
    assert run.status == Run.Status.GRADED and run.score == pytest.approx(1.0) and run.trajectory.n_steps == 3
    assert inspector.removed()  # always removed

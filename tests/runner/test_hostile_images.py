"""An agent image whose own configuration is hostile, run in real containers (marker docker) through the
supervisor under runc and runsc: the image declares volumes, runs as root, wraps the command in its own
ENTRYPOINT and CMD, asks for SIGKILL as its stop signal, a health check that writes a file, the site's
labels and an exposed port. None of it changes the sandbox: the site's command, user, stop signal
and labels, no health check, each declared volume a bounded tmpfs, no volume left on the Docker host,
and the runner runs the next job to a graded run."""

from __future__ import annotations

import errno
import io
import json
import textwrap
import uuid

import pytest

from leaderboard.models import Run
from runner.backends.docker import IMAGE_VOLUME_BYTES
from runner.jobs.services import create_job
from runner.models import AgentDefinition, JobTask
from tests.job_support import COMPETITION, needs_agent_tools
from tests.runner.test_hostile_agents import PRELUDE, assert_no_scratch_left, assert_runner_still_healthy, run_task

pytestmark = [pytest.mark.docker, needs_agent_tools]

HOSTILE_DOCKERFILE = """\
FROM {base}
USER root
VOLUME ["/scratch-volume", "/home/code/inner", "/home/logs", "/tmp"]
ENTRYPOINT ["/bin/sh", "-c", "echo hijacked > /home/code/entrypoint-ran.txt; exec \\"$@\\"", "--"]
CMD ["python3", "-c", "open('/home/code/cmd-ran.txt', 'w').write('x')"]
STOPSIGNAL SIGKILL
HEALTHCHECK --interval=1s --timeout=2s CMD touch /home/code/health-ran.txt
LABEL medalboard.sandbox=0 medalboard.runner=someone-else medalboard.site=another-site
EXPOSE 8080
"""

# Reports what it sees, fills the declared volume, submits, then waits for the time limit's stop.
AGENT = """
import errno, signal
report = {"uid": os.getuid(), "gid": os.getgid(), "groups": sorted(os.getgroups())}
report["filesystems"] = {line.split()[1]: line.split()[2] for line in open("/proc/mounts")}
written = 0
try:
    with open("/scratch-volume/fill", "wb") as fill:
        for _ in range(160):
            fill.write(b"x" * (1 << 20))
            fill.flush()
            written += 1 << 20
except OSError as exc:
    report["fill_error"] = exc.errno
report["written"] = written
os.remove("/scratch-volume/fill")
(logs / "report.json").write_text(json.dumps(report))
valid_submission()
def stopped(*_):
    (logs / "stopped.txt").write_text("SIGTERM")
    sys.exit(0)
signal.signal(signal.SIGTERM, stopped)
print("waiting for the stop", flush=True)
time.sleep(600)
"""


@pytest.fixture(scope="module")
def hostile_image():
    import docker
    from django.conf import settings

    client = docker.from_env()
    tag = f"medalboard-test-hostile-image:{uuid.uuid4().hex[:8]}"
    dockerfile = HOSTILE_DOCKERFILE.format(base=settings.MEDALBOARD_AGENT_IMAGE).encode()
    client.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, network_mode="none", rm=True, pull=False)
    yield tag
    client.images.remove(tag, force=True)


def _read(run: Run, name: str) -> bytes:
    with run.artifacts.get(name=name).file.open("rb") as handle:
        return handle.read()


def test_an_images_own_configuration_changes_nothing_of_the_sandbox(alice, loopback, docker_backend, hostile_image,
                                                                    monkeypatch):
    from runner.backends.docker import _sandbox_user

    client = docker_backend.client
    AgentDefinition.objects.update_or_create(name="hostile-image", defaults={
        "image": hostile_image, "command": ["python3", "-c", PRELUDE + textwrap.dedent(AGENT)]})
    job = create_job(user=alice, agent="hostile-image", competitions=[COMPETITION], time_limit_minutes=0.25)
    seen: dict = {}
    start = docker_backend.start

    def start_and_look(spec):
        sandbox = start(spec)
        seen.update(client.api.inspect_container(sandbox.id))
        return sandbox

    monkeypatch.setattr(docker_backend, "start", start_and_look)
    volumes_before = {v.name for v in client.volumes.list()}
    outcome, run, _ = run_task(job, loopback, docker_backend)

    assert outcome.status == JobTask.Status.TIMED_OUT, outcome.error
    assert run.status == Run.Status.GRADED and run.valid_submission, run.grading_error
    config, host = seen["Config"], seen["HostConfig"]
    assert config["Entrypoint"] == ["python3", "-c", PRELUDE + textwrap.dedent(AGENT)] and not config["Cmd"]
    assert config["User"] == _sandbox_user() and config["StopSignal"] == "SIGTERM"
    assert config["Healthcheck"]["Test"] == ["NONE"] and "Health" not in seen["State"]  # disabled
    assert {k: config["Labels"][k] for k in docker_backend.labels} == docker_backend.labels  # not the image's
    assert not host["PublishAllPorts"] and not host["PortBindings"]
    assert [m for m in seen["Mounts"] if m["Type"] == "volume"] == []  # no folder on the host's disk
    assert set(host["Tmpfs"]) == {"/tmp", "/scratch-volume", "/home/code/inner"}

    report = json.loads(_read(run, "logs/report.json"))
    uid, gid = (int(part) for part in _sandbox_user().split(":"))
    assert (report["uid"], report["gid"]) == (uid, gid) and set(report["groups"]) <= {gid}
    assert report["filesystems"]["/scratch-volume"] == "tmpfs"
    assert report["fill_error"] == errno.ENOSPC and report["written"] <= IMAGE_VOLUME_BYTES
    assert _read(run, "logs/stopped.txt") == b"SIGTERM"  # the site's stop signal, not the image's SIGKILL
    names = set(run.artifacts.values_list("name", flat=True))
    assert not names & {"code/entrypoint-ran.txt", "code/cmd-ran.txt", "code/health-ran.txt"}, names

    assert {v.name for v in client.volumes.list()} == volumes_before
    assert_no_scratch_left()
    assert_runner_still_healthy(alice, loopback, docker_backend)

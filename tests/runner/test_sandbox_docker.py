"""The Docker backend: the exact container it asks for (fake client), then real containers (marked docker).

The real-engine tests run the agent image (settings.MEDALBOARD_AGENT_IMAGE, built by
`manage.py build_agent_image`) and inspect what Docker actually made: network none, exactly five
mounts with the right read/write flags, no answers path, the limits, the device requests.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid

import docker.errors
import pytest
import requests.exceptions
from django.conf import settings
from docker.types import DeviceRequest, LogConfig, Mount

from runner.backends import BackendUnavailable, ImageNotFound, SandboxSpec, StartFailed
from runner.backends.docker import DockerBackend, site_key
from runner.host.agent_image import SELF_CHECK
from tests.conftest import REQUIRE_SERVICES

GIB = 1 << 30
USER = "1000:1000" if os.getuid() == 0 else f"{os.getuid()}:{os.getgid()}"


@pytest.fixture
def folders(tmp_path):
    """A competition's prepared data with its public and private halves side by side, as on disk."""
    public, private, tools = tmp_path / "prepared" / "public", tmp_path / "prepared" / "private", tmp_path / "tools"
    for folder in (public, private, tools):
        folder.mkdir(parents=True)
    (public / "train.csv").write_text("id,x,y\n1,2,0\n2,3,1\n")
    (public / "sample_submission.csv").write_text("id,y\n3,0\n")
    (private / "answers.csv").write_text("id,y\n3,1\n")
    (tools / "check_submission.py").write_text("print('ok')\n")
    return tmp_path


def make_spec(folders, command, **overrides) -> SandboxSpec:
    defaults = dict(
        name=f"medalboard-test-docker-{uuid.uuid4().hex[:10]}", command=command,
        data_dir=folders / "prepared" / "public", workdir=folders / "work", tools_dir=folders / "tools",
        image=settings.MEDALBOARD_AGENT_IMAGE, time_limit_s=120, cpus=1.5, memory_bytes=2 * GIB,
        shm_bytes=GIB // 2, pids_limit=256,
    )
    return SandboxSpec(**{**defaults, **overrides})


# --- the exact request, with a fake client (no engine needed) ---------------------------------------


class FakeContainer:
    def __init__(self, client, name, start_error=None):
        self.client, self.name, self.id = client, name, f"id-{name}"
        self.start_error, self.removed = start_error, False

    def start(self):
        if self.start_error:
            raise self.start_error

    def remove(self, force=False, v=False):
        self.removed, self.volumes_removed = True, v
        self.client.containers.made.pop(self.name, None)

    def logs(self, **kwargs):
        return iter([b"out\n"]) if kwargs.get("stream") else b"out\n"


class FakeContainers:
    def __init__(self, client):
        self.client, self.calls, self.made, self.fail_with, self.start_error = client, [], {}, None, None

    def create(self, **kwargs):
        self.calls.append(kwargs)
        if self.fail_with:
            raise self.fail_with
        if kwargs["name"] in self.made:
            raise docker.errors.APIError("Conflict", response=type("R", (), {"status_code": 409})())
        container = FakeContainer(self.client, kwargs["name"], self.start_error)
        container.labels = kwargs.get("labels") or {}
        self.made[kwargs["name"]] = container
        return container

    def get(self, name):
        return self.made[name]


class FakeImages:
    def __init__(self, present):
        self.present, self.volumes = present, None

    def get(self, image):
        if image not in self.present:
            raise docker.errors.ImageNotFound(f"No such image: {image}")
        return type("Image", (), {"id": f"sha256:{image}", "attrs": {"Config": {"Volumes": self.volumes}}})()


class FakeApi:
    def __init__(self):
        self.state, self.down = {"Status": "running", "ExitCode": 0}, False

    def inspect_container(self, container_id):
        if self.down:
            raise requests.exceptions.ConnectionError("Connection refused")
        return {"State": self.state}


class FakeNetworks:
    """The daemon's networks, looked up as Docker does: by id, then by name, then by an id's prefix."""

    def __init__(self):
        self.present = [
            {"Id": "f" * 64, "Name": "host", "Driver": "host", "Options": {}},
            {"Id": "b" * 64, "Name": "bridge", "Driver": "bridge",
             "Options": {"com.docker.network.bridge.default_bridge": "true"}},
            {"Id": "0" * 64, "Name": "none", "Driver": "null", "Options": {}},
            {"Id": "e" * 64, "Name": "llm-egress", "Driver": "bridge", "Options": {}},
            {"Id": "c" * 64, "Name": "sandbox-egress", "Driver": "bridge", "Options": {}},
        ]

    def get(self, term):
        for match in (lambda n: n["Id"] == term, lambda n: n["Name"] == term, lambda n: n["Id"].startswith(term)):
            found = [n for n in self.present if match(n)]
            if found:
                return type("Network", (), {"attrs": found[0], "id": found[0]["Id"], "name": found[0]["Name"]})()
        raise docker.errors.NotFound(f"network {term} not found")


class FakeClient:
    def __init__(self, images=("agent:1",)):
        self.containers, self.images = FakeContainers(self), FakeImages(set(images))
        self.api, self.down, self.networks = FakeApi(), False, FakeNetworks()

    def ping(self):
        if self.down:
            raise requests.exceptions.ConnectionError("Connection refused")
        return True


def test_exact_container_request_for_two_gpus_and_no_network(folders):
    client = FakeClient()
    backend = DockerBackend(client, runner_name="gpu-box-1")
    spec = make_spec(folders, ["python3", "/opt/medalboard/baseline_agent.py"], image="agent:1", gpus=(1, 3),
                     env={"SEED": "2"})
    sandbox = backend.start(spec)
    assert sandbox.id == f"id-{spec.name}"
    [kwargs] = client.containers.calls
    root = str(folders.resolve())
    assert kwargs == {
        "image": "agent:1",
        # the site's command as the entrypoint, with nothing of the image's (ENTRYPOINT or CMD) around it
        "entrypoint": ["python3", "/opt/medalboard/baseline_agent.py"],
        "command": [],
        "name": spec.name,
        "detach": True,
        "labels": {"medalboard.sandbox": "1", "medalboard.runner": "gpu-box-1", "medalboard.site": backend.site},
        "environment": {
            "SEED": "2", "DATA_DIR": "/home/data", "SUBMISSION_DIR": "/home/submission", "LOGS_DIR": "/home/logs",
            "CODE_DIR": "/home/code", "TOOLS_DIR": "/opt/medalboard", "TIME_LIMIT_SECONDS": "120",
            "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2",
            "MEDALBOARD_SANDBOX": spec.name, "HOME": "/tmp", "TMPDIR": "/tmp",
            # the same two GPUs as the device request: the runtime's by host index, CUDA's from 0
            "NVIDIA_VISIBLE_DEVICES": "1,3", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
            "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "0,1",
        },
        "working_dir": "/home/code",
        "user": USER,
        "stop_signal": "SIGTERM",  # never the image's STOPSIGNAL, nor its HEALTHCHECK
        "healthcheck": {"test": ["NONE"]},
        "mounts": [
            Mount("/home/data", f"{root}/prepared/public", type="bind", read_only=True),
            Mount("/home/submission", f"{root}/work/submission", type="bind", read_only=False),
            Mount("/home/logs", f"{root}/work/logs", type="bind", read_only=False),
            Mount("/home/code", f"{root}/work/code", type="bind", read_only=False),
            Mount("/opt/medalboard", f"{root}/tools", type="bind", read_only=True),
        ],
        "nano_cpus": 1_500_000_000,
        "mem_limit": 2 * GIB,
        "memswap_limit": 2 * GIB,
        "shm_size": GIB // 2,
        "pids_limit": 256,
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={2 * GIB},mode=1777"},
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "init": True,
        "runtime": "runc",
        "network_mode": "none",
        "device_requests": [DeviceRequest(device_ids=["1", "3"], capabilities=[["gpu"]])],
        # the output Docker keeps is capped (two files of 4 MiB), so a flood cannot fill the disk
        "log_config": LogConfig(type="json-file", config={"max-size": str(4 << 20), "max-file": "2"}),
    }
    assert kwargs["device_requests"][0]["DeviceIDs"] == ["1", "3"] and kwargs["device_requests"][0]["Count"] == 0


def test_no_gpus_means_no_device_request_and_an_egress_network_replaces_none(folders, settings):
    settings.SANDBOX_NETWORKS = ["llm-egress"]  # the runner's operator lists it for sandboxes
    client = FakeClient()
    DockerBackend(client).start(make_spec(folders, ["true"], image="agent:1", network="llm-egress"))
    [kwargs] = client.containers.calls
    assert "device_requests" not in kwargs
    assert kwargs["network"] == "llm-egress" and "network_mode" not in kwargs


def test_each_volume_the_image_declares_is_a_bounded_tmpfs_and_never_where_the_sandbox_mounts(folders):
    spec = make_spec(folders, ["true"], image="agent:1")
    backend = DockerBackend(FakeClient(), runner_name="box-1")
    declared = ["/scratch", "/scratch/", "/home/code/inner", "/home/logs", "/tmp", "/var/cache/x"]
    tmpfs = backend.container_kwargs(spec, declared)["tmpfs"]
    size = 64 << 20
    assert tmpfs == {"/tmp": f"rw,nosuid,nodev,size={2 * GIB},mode=1777",
                     "/scratch": f"rw,nosuid,nodev,size={size},mode=1777",
                     "/home/code/inner": f"rw,nosuid,nodev,size={size},mode=1777",
                     "/var/cache/x": f"rw,nosuid,nodev,size={size},mode=1777"}
    for refused in (["/proc/x"], ["/"], ["relative"], ["/dev"], [f"/v{i}" for i in range(17)],
                    ["/home/data/x"], ["/opt/medalboard/tools/x"]):  # beneath a read-only mount
        with pytest.raises(StartFailed, match="declares .*refused"):
            backend.container_kwargs(spec, refused)


def test_the_volumes_an_image_declares_reach_the_request(folders):
    client = FakeClient()
    client.images.volumes = {"/data-volume": {}}
    backend = DockerBackend(client, runner_name="box-1")
    backend.start(make_spec(folders, ["true"], image="agent:1"))
    [kwargs] = client.containers.calls
    assert set(kwargs["tmpfs"]) == {"/tmp", "/data-volume"}


def test_a_missing_image_is_refused_before_anything_is_created(folders):
    client = FakeClient(images=())
    backend = DockerBackend(client, runner_name="box-7")
    with pytest.raises(ImageNotFound, match=r"image 'agent:1' does not exist on runner box-7; build it with"):
        backend.start(make_spec(folders, ["true"], image="agent:1"))
    assert client.containers.calls == []  # never a pull attempt, never a container


def test_daemon_down_is_backend_unavailable(folders):
    client = FakeClient()
    client.down = True
    with pytest.raises(BackendUnavailable, match="Docker daemon not reachable at .*Connection refused"):
        DockerBackend(client).check()
    client.containers.fail_with = requests.exceptions.ConnectionError("Connection aborted")
    with pytest.raises(BackendUnavailable, match="Connection aborted"):
        DockerBackend(client).start(make_spec(folders, ["true"], image="agent:1"))


def test_poll_and_remove_of_a_finished_container(folders):
    client = FakeClient()
    spec = make_spec(folders, ["true"], image="agent:1")
    sandbox = DockerBackend(client).start(spec)
    assert sandbox.poll() is None
    client.api.state = {"Status": "exited", "ExitCode": 3}
    assert sandbox.poll() == 3
    sandbox.remove()
    sandbox.remove()  # idempotent
    assert client.containers.made == {}
    assert spec.host_output_log.read_text() == "out\n"  # the container's output, kept on the host
    assert sandbox.output_tail() == "out\n"


def test_daemon_down_while_running_is_backend_unavailable(folders):
    client = FakeClient()
    sandbox = DockerBackend(client).start(make_spec(folders, ["true"], image="agent:1"))
    client.api.down = True
    with pytest.raises(BackendUnavailable, match="Connection refused"):
        sandbox.poll()


def test_no_daemon_socket_at_all_is_backend_unavailable(monkeypatch, tmp_path):
    socket = tmp_path / "no-docker.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{socket}")
    with pytest.raises(BackendUnavailable, match=f"Docker daemon not reachable at unix://{socket}"):
        DockerBackend().check()


def test_a_leftover_container_of_the_same_attempt_is_replaced(folders):
    client = FakeClient()
    spec = make_spec(folders, ["true"], image="agent:1")
    backend = DockerBackend(client, runner_name="box-1")
    leftover = client.containers.create(name=spec.name, labels=backend.labels)
    backend.start(spec)
    assert leftover.removed and leftover.volumes_removed and len(client.containers.calls) == 3
    assert client.containers.made[spec.name] is not leftover


def test_a_container_of_another_runner_with_the_same_name_is_never_removed(folders):
    client = FakeClient()
    spec = make_spec(folders, ["true"], image="agent:1")
    theirs = client.containers.create(name=spec.name, labels={"medalboard.sandbox": "1", "medalboard.runner": "box-2"})
    with pytest.raises(StartFailed, match="taken by a container of runner 'box-2'"):
        DockerBackend(client, runner_name="box-1").start(spec)
    assert not theirs.removed and client.containers.made[spec.name] is theirs


def test_a_container_of_a_runner_of_the_same_name_on_another_site_is_never_removed(folders):
    client = FakeClient()
    spec = make_spec(folders, ["true"], image="agent:1")
    other_site = DockerBackend(client, runner_name="box-1", site="0123456789abcdef")
    theirs = client.containers.create(name=spec.name, labels=other_site.labels)
    mine = DockerBackend(client, runner_name="box-1")
    assert mine.site != other_site.site and mine.site == site_key()
    with pytest.raises(StartFailed, match="taken by a container of a runner 'box-1' of another site"):
        mine.start(spec)
    assert not theirs.removed and client.containers.made[spec.name] is theirs


def test_the_site_key_is_a_digest_of_the_database_and_never_its_address(settings):
    from django.db import connection

    key = site_key()
    db = connection.settings_dict
    expected = "|".join(str(db.get(part) or "") for part in ("ENGINE", "HOST", "PORT", "NAME"))
    assert key == hashlib.sha256(expected.encode()).hexdigest()[:16]
    assert str(db["NAME"]) not in key and len(key) == 16


def test_a_command_that_cannot_start_removes_its_container(folders):
    client = FakeClient()
    client.containers.start_error = docker.errors.APIError(
        "start failed", explanation='exec: "agent": executable file not found in $PATH')
    spec = make_spec(folders, ["agent"], image="agent:1")
    with pytest.raises(StartFailed, match="executable file not found"):
        DockerBackend(client).start(spec)
    assert client.containers.made == {}


def test_gpus_without_the_nvidia_runtime_say_what_to_install(folders):
    client = FakeClient()
    client.containers.start_error = docker.errors.APIError(
        "start failed", explanation='could not select device driver "" with capabilities: [[gpu]]')
    with pytest.raises(StartFailed, match="NVIDIA Container Toolkit"):
        DockerBackend(client).start(make_spec(folders, ["true"], image="agent:1", gpus=(0,)))


def test_a_missing_data_folder_is_refused(folders):
    spec = make_spec(folders, ["true"], image="agent:1", data_dir=folders / "nowhere")
    with pytest.raises(StartFailed, match="nowhere is not a folder"):
        DockerBackend(FakeClient()).start(spec)


# --- real containers ---------------------------------------------------------------------------------

AGENT = """
import json, os, subprocess
with open('/home/submission/submission.csv', 'w') as f:
    f.write('id,y\\n3,0\\n')
with open('/home/logs/agent.log', 'w') as f:
    f.write('trained\\n')
writable = {}
for path in ('/', '/home/data', '/opt/medalboard', '/home/code', '/tmp'):
    try:
        with open(os.path.join(path, 'probe'), 'w') as f:
            f.write('x')
        writable[path] = True
    except OSError:
        writable[path] = False
import sklearn, pandas
json.dump({'uid': os.getuid(), 'env': dict(os.environ), 'data': sorted(os.listdir('/home/data')),
           'writable': writable, 'sklearn': sklearn.__version__,
           'home': sorted(os.listdir('/home'))}, open('/home/code/seen.json', 'w'))
print('agent done', flush=True)
"""

STUBBORN = """
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
open('/home/submission/submission.csv', 'w').write('id,y\\n3,partial\\n')
print('working', flush=True)
time.sleep(600)
"""


@pytest.fixture
def engine():
    backend = DockerBackend()
    if not backend.image_exists(settings.MEDALBOARD_AGENT_IMAGE):
        message = (f"agent image {settings.MEDALBOARD_AGENT_IMAGE} not built "
                   "(python manage.py build_agent_image)")
        pytest.fail(message) if REQUIRE_SERVICES else pytest.skip(message)
    return backend


def wait(sandbox, timeout_s: float = 60) -> int:
    deadline = time.monotonic() + timeout_s
    while (code := sandbox.poll()) is None:
        assert time.monotonic() < deadline, sandbox.output_tail()
        time.sleep(0.2)
    return code


def gone(backend, name) -> bool:
    try:
        backend.client.containers.get(name)
    except docker.errors.NotFound:
        return True
    return False


@pytest.mark.docker
def test_agent_runs_in_a_locked_down_container(engine, folders):
    spec = make_spec(folders, ["python3", "-c", AGENT])
    sandbox = engine.start(spec)
    try:
        assert wait(sandbox) == 0, sandbox.output_tail()
        info = engine.client.api.inspect_container(sandbox.id)
    finally:
        sandbox.remove()
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert info["NetworkSettings"]["Networks"].keys() == {"none"}
    mounts = {m["Destination"]: (m["Source"], m["RW"], m["Type"]) for m in info["Mounts"]}
    root = str(folders.resolve())
    assert mounts == {
        "/home/data": (f"{root}/prepared/public", False, "bind"),
        "/home/submission": (f"{root}/work/submission", True, "bind"),
        "/home/logs": (f"{root}/work/logs", True, "bind"),
        "/home/code": (f"{root}/work/code", True, "bind"),
        "/opt/medalboard": (f"{root}/tools", False, "bind"),
    }
    assert not any("private" in source or "answers" in source for source, _, _ in mounts.values())
    assert (host["Memory"], host["MemorySwap"], host["NanoCpus"]) == (2 * GIB, 2 * GIB, 1_500_000_000)
    assert (host["PidsLimit"], host["ShmSize"]) == (256, GIB // 2)
    assert host["ReadonlyRootfs"] is True and host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"] == ["no-new-privileges"] and host["Init"] is True
    assert not host.get("DeviceRequests")
    assert info["Config"]["User"] == USER and info["Config"]["Labels"]["medalboard.sandbox"] == "1"

    work = folders / "work"
    assert (work / "submission" / "submission.csv").read_text() == "id,y\n3,0\n"
    assert (work / "logs" / "agent.log").read_text() == "trained\n"
    seen = json.loads((work / "code" / "seen.json").read_text())
    assert seen["uid"] == int(USER.split(":")[0])
    assert seen["data"] == ["sample_submission.csv", "train.csv"]  # the public half only
    assert seen["writable"] == {"/": False, "/home/data": False, "/opt/medalboard": False, "/home/code": True,
                                "/tmp": True}
    assert seen["env"]["DATA_DIR"] == "/home/data" and seen["env"]["TIME_LIMIT_SECONDS"] == "120"
    assert seen["env"]["CUDA_VISIBLE_DEVICES"] == "" and seen["env"]["NVIDIA_VISIBLE_DEVICES"] == "void"  # no GPU
    assert "agent done" in spec.host_output_log.read_text()  # kept after removal, outside the agent's folders
    assert "agent done" in sandbox.output_tail()
    assert gone(engine, spec.name)


@pytest.mark.docker
def test_device_requests_reach_the_engine(engine, folders):
    # No NVIDIA runtime here, so the container is only created and inspected, never started.
    spec = make_spec(folders, ["true"], gpus=(0, 2))
    engine._prepare_folders(spec)
    container = engine.client.containers.create(**engine.container_kwargs(spec))
    try:
        requests_ = engine.client.api.inspect_container(container.id)["HostConfig"]["DeviceRequests"]
    finally:
        container.remove(force=True)
    assert requests_ == [{"Driver": "", "Count": 0, "DeviceIDs": ["0", "2"], "Capabilities": [["gpu"]],
                          "Options": {}}]


@pytest.mark.docker
def test_stop_keeps_partial_output_and_remove_removes(engine, folders):
    spec = make_spec(folders, ["python3", "-c", STUBBORN])
    sandbox = engine.start(spec)
    deadline = time.monotonic() + 60
    while "working" not in sandbox.output_tail():
        assert time.monotonic() < deadline and sandbox.poll() is None, sandbox.output_tail()
        time.sleep(0.2)
    started = time.monotonic()
    assert sandbox.stop(grace_s=1) == 137  # ignored SIGTERM, so killed
    assert time.monotonic() - started < 10
    assert (spec.host_submission_dir / "submission.csv").read_text() == "id,y\n3,partial\n"
    sandbox.remove()
    sandbox.remove()  # idempotent
    assert gone(engine, spec.name)
    assert "working" in spec.host_output_log.read_text()


@pytest.mark.docker
def test_removing_a_sandbox_that_still_runs_is_prompt_and_keeps_its_output(engine, folders):
    """The supervisor removes a sandbox it could not stop (an error while watching it): copying its
    output must not wait for the agent to finish."""
    spec = make_spec(folders, ["sh", "-c", "echo started; sleep 600"])
    sandbox = engine.start(spec)
    deadline = time.monotonic() + 20
    while "started" not in sandbox.output_tail() and time.monotonic() < deadline:
        time.sleep(0.2)
    began = time.monotonic()
    sandbox.remove()
    assert time.monotonic() - began < 15
    assert gone(engine, spec.name) and "started" in spec.host_output_log.read_text()


@pytest.mark.docker
def test_remove_stale_cleans_labelled_leftovers(engine, folders):
    prefix = f"medalboard-stale-{uuid.uuid4().hex[:6]}-"
    names = [prefix + "a", prefix + "b"]
    for name in names:
        engine.start(make_spec(folders, ["sleep", "600"], name=name, workdir=folders / name))
    other_runner = DockerBackend(runner_name=f"another-runner-{uuid.uuid4().hex[:6]}")
    assert other_runner.remove_stale(prefix=prefix) == 0  # another runner's sandboxes are never its to remove
    other_site = DockerBackend(runner_name=engine.runner_name, site="0123456789abcdef")
    assert other_site.remove_stale(prefix=prefix) == 0  # nor those of a runner of its name on another site
    assert all(not gone(engine, name) for name in names)
    restarted = DockerBackend(runner_name=engine.runner_name)
    assert restarted.remove_stale(prefix=f"medalboard-other-{uuid.uuid4().hex[:6]}-") == 0
    assert restarted.remove_stale(prefix=prefix) == 2
    assert all(gone(engine, name) for name in names)


@pytest.mark.docker
def test_an_unknown_image_is_refused_with_the_build_command(engine, folders):
    with pytest.raises(ImageNotFound, match="build_agent_image"):
        engine.start(make_spec(folders, ["true"], image=f"medalboard-nope:{uuid.uuid4().hex[:6]}"))


@pytest.mark.docker
def test_the_agent_image_fits_models_under_the_sandbox_limits(engine, folders):
    sandbox = engine.start(make_spec(folders, ["python3", "-c", SELF_CHECK]))
    try:
        assert wait(sandbox) == 0, sandbox.output_tail()
    finally:
        sandbox.remove()
    assert "agent image ok" in sandbox.output_tail()


@pytest.mark.parametrize("listed, why", [
    ("f" * 64, "is the id of network 'host'"), ("ffff", "is the id of network 'host'"),
    ("bbbbbbbbbbbb", "is the id of network 'bridge'"), ("0000", "is the id of network 'none'"),
    ("missing-net", "does not exist on this Docker host"),
])
def test_a_listed_name_that_the_daemon_reads_as_another_network_is_refused(folders, settings, listed, why):
    settings.SANDBOX_NETWORKS = [listed]  # an operator's slip: what the daemon makes of it decides
    client = FakeClient()
    with pytest.raises(StartFailed, match=f"the network '{listed}' {why}"):
        DockerBackend(client).start(make_spec(folders, ["true"], image="agent:1", network=listed))
    assert client.containers.calls == []


def test_a_listed_network_on_the_host_driver_or_the_default_bridge_is_refused(folders, settings):
    client = FakeClient()
    client.networks.present += [{"Id": "a" * 64, "Name": "my-host", "Driver": "host", "Options": {}},
                                {"Id": "d" * 64, "Name": "old-bridge", "Driver": "bridge",
                                 "Options": {"com.docker.network.bridge.default_bridge": "true"}}]
    settings.SANDBOX_NETWORKS = ["my-host", "old-bridge"]
    for name in settings.SANDBOX_NETWORKS:
        with pytest.raises(StartFailed, match=f"the network '{name}' is Docker's (host|bridge) network"):
            DockerBackend(client).start(make_spec(folders, ["true"], image="agent:1", network=name))
    assert client.containers.calls == []


@pytest.mark.parametrize("network", ["host", "bridge", "container:abc", "unlisted-net", "HOST", "Bridge",
                                     "container:" + "f" * 64, "f" * 64, "ffff"])
def test_the_runner_refuses_a_network_it_does_not_offer_before_creating_anything(folders, settings, network):
    settings.SANDBOX_NETWORKS = ["sandbox-egress"]
    client = FakeClient()
    with pytest.raises(StartFailed, match=network.split(":")[0]):
        DockerBackend(client).start(make_spec(folders, ["true"], image="agent:1", network=network))
    assert client.containers.calls == []

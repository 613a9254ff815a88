"""A sandbox sees exactly its GPUs: the Docker engine receives the device request and the variables the
NVIDIA runtime and CUDA read for the same GPUs, `void` for none, whatever the job's own environment
says; the local backend narrows CUDA to the same indices. On a machine without the NVIDIA Container
Toolkit the container is created and inspected, never started with GPUs (scripts/gpu_check.sh is the
check on a GPU machine)."""

from __future__ import annotations

import io
import tarfile
import uuid

import docker
import pytest

from runner.backends import StartFailed
from runner.backends.docker import DockerBackend
from runner.backends.local import LocalBackend
from tests.runner.test_sandbox_docker import folders, make_spec  # noqa: F401 - the fixture


@pytest.fixture
def tiny_image():
    """An image of one file, imported (never pulled): enough to create a container and read its config."""
    client = docker.from_env()
    tag = f"gpuenv-test-tiny:{uuid.uuid4().hex[:8]}"
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        info = tarfile.TarInfo("hello")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"hi\n"))
    client.api.import_image_from_data(archive.getvalue(), repository=tag.split(":")[0], tag=tag.split(":")[1])
    yield tag
    client.images.remove(tag, force=True)


def created(backend: DockerBackend, spec) -> dict:
    """The container the engine made of `spec` (created, never started), as `docker inspect` shows it."""
    backend._prepare_folders(spec)
    container = backend.client.containers.create(**backend.container_kwargs(spec))
    try:
        return backend.client.api.inspect_container(container.id)
    finally:
        container.remove(force=True)


def environment(attrs: dict) -> dict[str, str]:
    return dict(line.split("=", 1) for line in attrs["Config"]["Env"])


@pytest.mark.docker
@pytest.mark.serial
def test_the_engine_gets_exactly_the_tasks_gpus_and_the_same_in_the_environment(folders, tiny_image):  # noqa: F811
    # The job's own environment cannot widen it (an agent's ENV NVIDIA_VISIBLE_DEVICES=all would take
    # every GPU on a host whose default runtime is nvidia).
    spec = make_spec(
        folders,
        ["/hello"],
        image=tiny_image,
        gpus=(1, 3),
        env={"NVIDIA_VISIBLE_DEVICES": "all", "CUDA_VISIBLE_DEVICES": "0,1,2,3"},
    )
    attrs = created(DockerBackend(runner_name="gpuenv-test"), spec)
    assert attrs["HostConfig"]["DeviceRequests"] == [
        {"Driver": "", "Count": 0, "DeviceIDs": ["1", "3"], "Capabilities": [["gpu"]], "Options": {}}
    ]
    env = environment(attrs)
    assert env["NVIDIA_VISIBLE_DEVICES"] == "1,3"  # what the toolkit mounts: the host's indices
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"  # inside, the two are renumbered from 0
    assert env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert env["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility"  # CUDA, and nvidia-smi for start.sh


@pytest.mark.docker
@pytest.mark.serial
def test_a_task_without_gpus_gets_none_even_where_the_image_asks_for_all(folders, tiny_image):  # noqa: F811
    spec = make_spec(folders, ["/hello"], image=tiny_image, env={"NVIDIA_VISIBLE_DEVICES": "all"})
    attrs = created(DockerBackend(runner_name="gpuenv-test"), spec)
    assert not attrs["HostConfig"]["DeviceRequests"]
    env = environment(attrs)
    assert env["NVIDIA_VISIBLE_DEVICES"] == "void" and env["CUDA_VISIBLE_DEVICES"] == ""


@pytest.mark.docker
@pytest.mark.serial
def test_starting_with_gpus_on_an_engine_without_the_toolkit_says_what_to_install(folders, tiny_image):  # noqa: F811
    backend = DockerBackend(runner_name="gpuenv-test")
    if "nvidia" in (backend.client.info().get("Runtimes") or {}):
        pytest.skip("this engine has the NVIDIA runtime: scripts/gpu_check.sh checks a real start")
    with pytest.raises(StartFailed, match="NVIDIA Container Toolkit"):
        backend.start(make_spec(folders, ["/hello"], image=tiny_image, gpus=(0,)))
    assert not backend.client.containers.list(all=True, filters={"label": "medalboard.runner=gpuenv-test"})


def test_a_local_sandbox_sees_the_same_indices_through_cuda(folders):  # noqa: F811
    backend = LocalBackend(runner_name="gpuenv-test", site="test")
    with_gpus = backend.environment(make_spec(folders, ["true"], gpus=(2, 5), env={"CUDA_VISIBLE_DEVICES": "0"}))
    assert (with_gpus["CUDA_VISIBLE_DEVICES"], with_gpus["CUDA_DEVICE_ORDER"]) == ("2,5", "PCI_BUS_ID")
    assert backend.environment(make_spec(folders, ["true"]))["CUDA_VISIBLE_DEVICES"] == ""

"""GPU runners with a fake NVML: hardware detection -> registration and the queues it consumes,
routing of a job's tasks to those queues, per-GPU accounting (two tasks never share a GPU, a task
never gets more than it asked for), and the exact device request the Docker backend receives."""

from __future__ import annotations

import sys
import threading

import pytest
from django.conf import settings
from django.db import connection

from runner.backends import SandboxSpec
from runner.backends.docker import DockerBackend
from runner.host.hardware import detect
from runner.jobs import registry, task_leases
from runner.jobs.services import create_job
from runner.models import GpuSlot, JobTask, Runner
from tests.runner.test_hardware import fake_pynvml
from tests.runner.test_sandbox_docker import FakeClient

GPUS = ["NVIDIA A10", "NVIDIA A10", "NVIDIA A100 80GB PCIe"]


class RecordingDocker(DockerBackend):
    """The real Docker backend's request, recorded instead of sent; the "agent" exits at once."""

    def __init__(self) -> None:
        super().__init__(FakeClient(images=(settings.MEDALBOARD_AGENT_IMAGE,)), runner_name="gpu-box")
        self.client.api.images = lambda: [{"RepoTags": [settings.MEDALBOARD_AGENT_IMAGE]}]  # what a runner lists
        self.requests: list[dict] = []

    def remove_stale(self, prefix: str = "medalboard-") -> int:
        return 0  # nothing was ever started on this engine

    def start(self, spec: SandboxSpec):
        self.requests.append(self.container_kwargs(spec))
        return Exited(spec)


class Exited:
    def __init__(self, spec):
        self.spec, self.id = spec, "exited"

    def poll(self):
        return 0

    def stop(self, grace_s=5.0):
        return 0

    def remove(self):
        pass

    def output_tail(self, max_bytes=16_384):
        return ""


@pytest.fixture
def gpu_runner(monkeypatch, job_world):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(GPUS, 24_000))
    hardware = detect()
    runner = registry.register(name="gpu-box", backend=RecordingDocker(), hardware=hardware,
                               queues=registry.default_queues(hardware), concurrency=3)
    Runner.objects.filter(name="test-runner").delete()  # the CPU-only runner of job_world
    return runner


def test_detected_gpus_are_registered_with_the_queues_they_can_serve(gpu_runner):
    assert [g["name"] for g in gpu_runner.gpus] == GPUS and gpu_runner.concurrency == 3
    assert list(GpuSlot.objects.filter(runner=gpu_runner).values_list("index", "name")) == list(enumerate(GPUS))
    for queue in ("jobs.cpu", "jobs.gpu.1", "jobs.gpu.3", "jobs.gpu.a10.2", "jobs.gpu.nvidia-a10.1",
                  "jobs.gpu.a100.1", "jobs.gpu.a100-80gb.1", "celery"):
        assert queue in gpu_runner.queues
    assert "jobs.gpu.4" not in gpu_runner.queues and "jobs.gpu.a100.2" not in gpu_runner.queues
    assert gpu_runner.images == [settings.MEDALBOARD_AGENT_IMAGE]


def test_tasks_go_to_queues_a_runner_consumes(alice, gpu_runner, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        jobs = [create_job(user=alice, agent="scripted", competitions=["spaceship-titanic"], time_limit_minutes=1,
                           gpus=n, gpu_type=kind) for n, kind in ((2, "A10"), (1, "a100"), (3, ""), (0, ""))]
    queues = [job.tasks.get().queue for job in jobs]
    assert queues == ["jobs.gpu.a10.2", "jobs.gpu.a100.1", "jobs.gpu.3", "jobs.cpu"]
    assert set(queues) <= set(gpu_runner.queues)


def task_needing(alice, gpus: int, gpu_type: str = "") -> JobTask:
    job = create_job(user=alice, agent="scripted", competitions=["spaceship-titanic"], time_limit_minutes=1,
                     gpus=gpus, gpu_type=gpu_type)
    return job.tasks.get()


@pytest.fixture
def gpu_loopback(monkeypatch, loopback) -> tuple:
    """The loopback runner on a machine with GPUS (a fake NVML) and a recording Docker, with three slots;
    (the loopback runner, its Runner row)."""
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(GPUS, 24_000))
    name = loopback.register(RecordingDocker(), slots=3)
    Runner.objects.filter(name="test-runner").delete()  # the CPU-only runner of job_world
    return loopback, Runner.objects.get(name=name)


def test_gpus_are_accounted_per_device(alice, gpu_runner, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        two_a10, one_a10, one_any = task_needing(alice, 2, "A10"), task_needing(alice, 1, "A10"), task_needing(alice, 1)
    first = task_leases.claim(two_a10.pk, gpu_runner)
    assert task_leases.take_gpus(first, gpu_runner, 2, "A10") == [0, 1]
    second = task_leases.claim(one_a10.pk, gpu_runner)
    with pytest.raises(task_leases.NoFreeGpus):
        task_leases.take_gpus(second, gpu_runner, 1, "A10")  # both A10s are held
    assert not GpuSlot.objects.filter(task=one_a10).exists()  # a failed take holds nothing
    third = task_leases.claim(one_any.pk, gpu_runner)
    assert task_leases.take_gpus(third, gpu_runner, 1) == [2]  # exactly one, the free A100
    task_leases.finish(first, JobTask.Status.SUCCEEDED)
    assert task_leases.take_gpus(second, gpu_runner, 1, "A10") == [0]
    held = dict(GpuSlot.objects.filter(runner=gpu_runner).values_list("index", "task_id"))
    assert held == {0: one_a10.pk, 1: None, 2: one_any.pk}
    assert JobTask.objects.get(pk=one_a10.pk).gpu_indices == [0]


def test_concurrent_takes_never_share_a_gpu(transactional_db, alice, gpu_runner):
    tasks = [task_needing(alice, 1) for _ in range(8)]
    claims = [task_leases.claim(t.pk, gpu_runner) for t in tasks]
    got: dict[int, list[int]] = {}
    barrier = threading.Barrier(len(claims))

    def take(held):
        barrier.wait()
        try:
            got[held.pk] = task_leases.take_gpus(held, gpu_runner, 1)
        except task_leases.NoFreeGpus:
            got[held.pk] = []
        finally:
            connection.close()

    threads = [threading.Thread(target=take, args=(held,)) for held in claims]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    taken = sorted(i for indices in got.values() for i in indices)
    assert taken == [0, 1, 2] and sum(1 for v in got.values() if v) == 3


def test_docker_gets_a_device_request_for_exactly_the_assigned_gpus(alice, gpu_loopback):
    loopback, runner = gpu_loopback
    blocker, task = task_needing(alice, 1, "A10"), task_needing(alice, 2)
    task_leases.take_gpus(task_leases.claim(blocker.pk, runner), runner, 1, "A10")  # GPU 0 is busy
    backend = RecordingDocker()
    outcome = loopback.run_graded(task.pk, backend, slots=3)
    assert outcome.status == JobTask.Status.SUCCEEDED
    [request] = backend.requests
    [device_request] = request["device_requests"]
    assert device_request["DeviceIDs"] == ["1", "2"] and device_request["Capabilities"] == [["gpu"]]
    assert request["network_mode"] == "none"
    assert not GpuSlot.objects.filter(task=task).exists()  # released at the end
    assert JobTask.objects.get(pk=task.pk).gpu_indices == [1, 2]


def test_the_runner_summary_says_which_job_holds_which_gpu(alice, gpu_runner, django_capture_on_commit_callbacks):
    from runner.jobs.services import runner_summary

    with django_capture_on_commit_callbacks(execute=False):
        task = task_needing(alice, 1, "A100")
    task_leases.take_gpus(task_leases.claim(task.pk, gpu_runner), gpu_runner, 1, "A100")
    summary = runner_summary(Runner.objects.get(pk=gpu_runner.pk))
    assert summary["status"] == "online" and summary["running"] == [task.pk]
    assert [(g["index"], g["name"], g["task"], g["job"]) for g in summary["gpus"]] == [
        (0, "NVIDIA A10", None, None), (1, "NVIDIA A10", None, None),
        (2, "NVIDIA A100 80GB PCIe", task.pk, task.job_id),
    ]


def test_a_task_a_runner_can_never_serve_fails_instead_of_waiting(alice, gpu_runner,
                                                                  django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        task = task_needing(alice, 1, "A100")
    held = task_leases.claim(task.pk, gpu_runner)
    with pytest.raises(RuntimeError, match="2 A100s needed, gpu-box has 1"):
        task_leases.take_gpus(held, gpu_runner, 2, "A100")
    with pytest.raises(RuntimeError, match="not a registered runner"):
        task_leases.take_gpus(held, None, 1)
    assert not GpuSlot.objects.filter(task=task).exists()


def test_the_run_records_the_gpu_model_and_driver_it_got_and_shows_them(alice, gpu_loopback, client):
    from leaderboard.analysis.scaling import gpus_used
    from tests.runner.test_hardware import DRIVER

    loopback, runner = gpu_loopback
    blocker, task = task_needing(alice, 2, "A10"), task_needing(alice, 1)  # asks for "a GPU", any model
    task_leases.take_gpus(task_leases.claim(blocker.pk, runner), runner, 2, "A10")  # both A10s are busy
    assert loopback.run_graded(task.pk, RecordingDocker(), slots=3).status == JobTask.Status.SUCCEEDED
    run = JobTask.objects.get(pk=task.pk).run
    hardware = run.recipe["hardware"]
    assert hardware["gpu_devices"] == [{"index": 2, "name": "NVIDIA A100 80GB PCIe", "memory_mb": 24_000,
                                        "uuid": "GPU-00000002-fake", "driver": DRIVER}]
    assert (hardware["gpu_names"], hardware["gpu_driver"]) == (["NVIDIA A100 80GB PCIe"], DRIVER)
    # the experiment says only what the job asked for; the run says which card it got
    assert run.experiment.hardware.startswith("1x GPU")
    words = f"1x NVIDIA A100 80GB PCIe · driver {DRIVER}"
    assert run.gpus_used == words
    assert words in client.get(f"/runs/{run.pk}/").content.decode()
    assert gpus_used([run.experiment_id]) == {run.experiment_id: [words]}  # /scaling/hardware/'s gpus_used


def test_a_cpu_only_job_run_says_it_had_no_gpu(alice, gpu_loopback):
    loopback, _ = gpu_loopback
    job = create_job(user=alice, agent="scripted", competitions=["spaceship-titanic"], time_limit_minutes=1)
    task = job.tasks.get()
    loopback.run_graded(task.pk, RecordingDocker())
    run = JobTask.objects.get(pk=task.pk).run
    assert run.recipe["hardware"]["gpu_devices"] == [] and run.gpus_used == "none"

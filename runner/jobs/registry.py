"""Runners register, heartbeat and drain. `manage.py runner` registers its machine before starting
its worker; the worker's heartbeat thread (webapp.worker) keeps `last_heartbeat` fresh, and a runner
whose heartbeats stop is shown offline (Runner.current_status) after a few intervals. Both report the
networks the runner's operator lets sandboxes join (runner.host.networks), which jobs are checked against."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from runner.backends import Backend
from runner.host.hardware import Hardware
from runner.host.networks import offered_networks
from runner.jobs.queues import GRADING_QUEUE, queues_for_hardware
from runner.jobs.services import agent_image, ensure_builtin_agents
from runner.jobs.task_leases import sync_gpu_slots
from runner.models import AgentDefinition, Job, JobTask, Runner


def default_queues(hardware: Hardware) -> list[str]:
    """Every job queue the hardware can serve, and the grading queue."""
    return [*queues_for_hardware(g.name for g in hardware.gpus), GRADING_QUEUE]


def default_concurrency(hardware: Hardware) -> int:
    """One task per GPU, or on a CPU-only machine one per two cores (at least one, at most eight)."""
    return len(hardware.gpus) or max(1, min(8, hardware.cpu_count // 2))


def wanted_images() -> set[str]:
    """The images a runner should report: every agent's current one, and those of unfinished jobs
    made before a re-import."""
    wanted = {agent_image(a) for a in AgentDefinition.objects.all()}
    pending = Job.objects.filter(tasks__status__in=[JobTask.Status.QUEUED, JobTask.Status.RUNNING]).exclude(
        agent_image="")
    return wanted | set(pending.values_list("agent_image", flat=True))


def refresh_runner_images() -> None:
    """Tell the site which images the runner on this Docker host now has (it reports them at start);
    the commands that build agent images call it once they are built."""
    from runner.backends.docker import DockerBackend  # the Docker SDK: only when images are built

    backend = DockerBackend()
    runners = Runner.objects.filter(name=backend.runner_name, backend=Runner.Backend.DOCKER)
    if runners.exists():
        runners.update(images=images_present(backend))


def images_present(backend: Backend) -> list[str]:
    """The agent images this runner can start ("*": any, for the local backend, which ignores them)."""
    if backend.name == "local":
        return ["*"]
    ensure_builtin_agents()
    wanted = wanted_images()
    return sorted(image for image in wanted if backend.image_exists(image))


@transaction.atomic
def register(*, name: str, backend: Backend, hardware: Hardware, queues: list[str], concurrency: int,
             version: str = "") -> Runner:
    now = timezone.now()
    runner, _ = Runner.objects.update_or_create(name=name, defaults={
        "hostname": hardware.hostname, "backend": backend.name, "gpus": hardware.gpus_json(),
        "cpu_count": hardware.cpu_count, "memory_gb": hardware.memory_gb, "queues": queues,
        "concurrency": concurrency, "images": images_present(backend), "networks": offered_networks(),
        "runtime": getattr(backend, "runtime", ""),
        "status": Runner.Status.ONLINE,
        "last_heartbeat": now, "started_at": now, "version": version,
    })
    sync_gpu_slots(runner)
    return runner


def heartbeat(name: str) -> None:
    from django.conf import settings

    from runner.host.slots import stuck

    Runner.objects.filter(name=name).update(last_heartbeat=timezone.now(), networks=offered_networks(),
                                            stuck_tasks=stuck(settings.RUNNER_WORK_DIR))


def set_draining(name: str, draining: bool = True) -> bool:
    """A draining runner finishes what it runs and takes nothing new; False if no such runner."""
    status = Runner.Status.DRAINING if draining else Runner.Status.ONLINE
    return Runner.objects.filter(name=name).update(status=status) == 1


def is_draining(name: str) -> bool:
    return Runner.objects.filter(name=name, status=Runner.Status.DRAINING).exists()


def held_elsewhere(runner_name: str) -> set[int]:
    """Tasks that other runners hold now: their scratch may share this work folder and stays."""
    held = JobTask.objects.filter(status__in=(JobTask.Status.RUNNING, JobTask.Status.GRADING))
    return set(held.exclude(runner__name=runner_name).values_list("pk", flat=True))

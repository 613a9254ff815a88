"""GPU runner machines and the benchmark jobs they execute.

A Runner is a Celery worker host that registered itself (its GPUs, CPUs and memory). A Job asks for
one agent run on one competition with a resource budget; a worker claims it with a conditional
UPDATE so two workers never run the same job, and the finished job points at the Run it produced.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Runner(models.Model):
    class Backend(models.TextChoices):
        DOCKER = "docker", "Docker Engine"
        LOCAL = "local", "Local subprocess"

    class Status(models.TextChoices):
        ONLINE = "online", "Online"
        DRAINING = "draining", "Draining"
        OFFLINE = "offline", "Offline"

    name = models.CharField(max_length=200, unique=True)
    hostname = models.CharField(max_length=300, blank=True)
    queue = models.CharField(max_length=200, default="runs", help_text="Celery queue this runner consumes")
    backend = models.CharField(max_length=20, choices=Backend.choices, default=Backend.LOCAL)
    gpus = models.JSONField(default=list, blank=True, help_text="[{index, name, memory_mb, uuid}]")
    cpu_count = models.PositiveIntegerField(default=1)
    memory_gb = models.FloatField(default=0)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ONLINE)
    last_heartbeat = models.DateTimeField(null=True, blank=True)
    version = models.CharField(max_length=50, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Job(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        CLAIMED = "claimed", "Claimed"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        TIMED_OUT = "timed_out", "Timed out"
        CANCELLED = "cancelled", "Cancelled"

    experiment = models.ForeignKey("leaderboard.Experiment", on_delete=models.CASCADE, related_name="jobs")
    competition = models.ForeignKey("leaderboard.Competition", on_delete=models.PROTECT, related_name="jobs")
    seed = models.IntegerField(default=0)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True)
    runner = models.ForeignKey(Runner, on_delete=models.SET_NULL, null=True, blank=True, related_name="jobs")
    run = models.OneToOneField(
        "leaderboard.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="job"
    )
    image = models.CharField(max_length=300, blank=True, help_text="Docker image of the agent")
    command = models.JSONField(default=list, blank=True, help_text="argv run inside the container")
    gpus = models.PositiveIntegerField(default=0)
    cpus = models.FloatField(default=1)
    memory_gb = models.FloatField(default=4)
    time_limit_s = models.PositiveIntegerField(default=3600)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    celery_task_id = models.CharField(max_length=100, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"job {self.pk} ({self.competition_id}, seed {self.seed}, {self.status})"

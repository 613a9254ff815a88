"""GPU runner machines, the agents they can run, and the benchmark jobs they execute.

A Runner is a Celery worker host that registered itself (its GPUs, CPUs, memory and the agent images
it has) and heartbeats. An AgentDefinition names an agent (`baseline` is built in). A Job is one
request: an agent x model x settings on some competitions, some seeds, a time limit and resources.
Each competition x seed is a JobTask, the unit a runner claims with a conditional UPDATE and holds
under a lease it keeps renewing; GPUs are accounted per device index in GpuSlot rows.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone

from runner.jobs.states import JobStatus, TaskStatus, job_state, job_status, task_state


class Runner(models.Model):
    class Backend(models.TextChoices):
        DOCKER = "docker", "Docker Engine"
        LOCAL = "local", "Local subprocess"

    class Status(models.TextChoices):
        ONLINE = "online", "Online"
        DRAINING = "draining", "Draining"
        OFFLINE = "offline", "Offline"
        STUCK = "stuck", "Stuck"

    name = models.CharField(max_length=200, unique=True)
    hostname = models.CharField(max_length=300, blank=True)
    queues = models.JSONField(default=list, blank=True, help_text="Celery queues this runner consumes")
    backend = models.CharField(max_length=20, choices=Backend.choices, default=Backend.LOCAL)
    gpus = models.JSONField(default=list, blank=True, help_text="[{index, name, memory_mb, uuid}]")
    cpu_count = models.PositiveIntegerField(default=1)
    memory_gb = models.FloatField(default=0)
    images = models.JSONField(default=list, blank=True, help_text="Agent images present on this runner")
    networks = models.JSONField(default=list, blank=True,
                                help_text="Networks its sandboxes may join (MEDALBOARD_SANDBOX_NETWORKS)")
    concurrency = models.PositiveIntegerField(default=1)
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.ONLINE,
        help_text="As set by the runner or an operator; `current_status` also says offline after missed heartbeats",
    )
    last_heartbeat = models.DateTimeField(null=True, blank=True)
    stuck_tasks = models.JSONField(
        default=list, blank=True, help_text="[{task, silent_s}]: slots whose supervisor stopped ticking (runner.slots)")
    started_at = models.DateTimeField(null=True, blank=True)
    version = models.CharField(max_length=50, blank=True)
    runtime = models.CharField(max_length=50, blank=True, help_text="The OCI runtime of a Docker runner (runc, runsc)")
    # A runner attached over the runner API (runner.api_v1) holds a token; only its sha256 is kept.
    token_hash = models.CharField(max_length=64, blank=True, db_index=True,
                                  help_text="sha256 of the runner API token (manage.py create_runner shows it once)")
    token_revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    @property
    def takes(self) -> str:
        """What it takes, in words (the runners page, GET /api/runners/): job tasks only through the
        runner API; a Celery runner does the site's own work."""
        if self.token_hash:
            return "job tasks, claimed over the runner API"
        return "no job: the site's own work (grading, research baselines and evals, sweeps)"

    def __str__(self) -> str:
        return self.name

    def meets(self, requirements: dict) -> bool:
        """Whether this runner starts sandboxes the way `requirements` (a Job's) asks: backend, runtime."""
        return all(not wanted or wanted == getattr(self, key, "") for key, wanted in requirements.items())

    @staticmethod
    def offline_after() -> timedelta:
        return timedelta(seconds=django_settings.RUNNER_HEARTBEAT_S * django_settings.RUNNER_OFFLINE_AFTER_HEARTBEATS)

    @property
    def current_status(self) -> str:
        """Offline once heartbeats stopped for a few intervals, whatever the stored status says."""
        if self.last_heartbeat is None or timezone.now() - self.last_heartbeat > self.offline_after():
            return self.Status.OFFLINE
        if self.stuck_tasks:
            return self.Status.STUCK
        return self.status

    @property
    def gpu_count(self) -> int:
        return len(self.gpus)


class AgentDefinition(models.Model):
    """How to start an agent: an image and a command; `--agent NAME` resolves to one of these.

    Agents packaged as MLE-bench packages them (runner.agents) keep their id as the name, slashes
    included (`aide/dev`), and carry the variant's config in `package` and its content hash in
    `version`; re-importing a changed folder updates both (and the image tag)."""

    class Format(models.TextChoices):
        SITE = "", "Defined on the site"
        MLEBENCH = "mlebench", "MLE-bench agent package"

    name = models.CharField(max_length=200, unique=True, help_text="The agent id, e.g. baseline or aide/dev")
    image = models.CharField(max_length=300, blank=True, help_text="Docker image (empty: the site's agent image)")
    command = models.JSONField(default=list, help_text="argv run inside the sandbox")
    env_vars = models.JSONField(
        default=list, blank=True, help_text="Names of secrets the agent needs, e.g. OPENAI_API_KEY"
    )
    builtin = models.BooleanField(default=False)
    description = models.TextField(blank=True)
    package_format = models.CharField(max_length=20, choices=Format.choices, default=Format.SITE, blank=True)
    version = models.CharField(max_length=64, blank=True, help_text="Content hash of the agent's folder")
    package = models.JSONField(default=dict, blank=True, help_text="The packaged agent's config, as imported")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Job(models.Model):
    """One request. Its status is derived from its tasks (`status`), never stored twice."""

    Status = JobStatus  # runner.jobs.states: the words beside the rules that derive them

    experiment = models.ForeignKey("leaderboard.Experiment", on_delete=models.CASCADE, related_name="jobs")
    agent = models.ForeignKey(AgentDefinition, on_delete=models.PROTECT, related_name="jobs")
    model_name = models.CharField(max_length=200, blank=True)
    settings = models.JSONField(default=dict, blank=True)
    split = models.CharField(max_length=100, blank=True, help_text="The split the competitions came from, if any")
    seeds = models.PositiveIntegerField(default=1)
    time_limit_s = models.FloatField()
    gpu_type = models.CharField(max_length=100, blank=True)
    gpus = models.PositiveIntegerField(default=0)
    cpus = models.FloatField(default=1)
    memory_gb = models.FloatField(default=4)
    network = models.CharField(
        max_length=200, null=True, blank=True, help_text="None: no network; else an egress network"
    )
    private = models.BooleanField(default=False, help_text="Its runs are seen by their owner and staff only")
    # Secrets for the sandbox's environment only; sealed by runner.host.secrets, never shown anywhere.
    sealed_env = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="jobs"
    )
    cancel_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # The agent as it was when the job was made: a later re-import does not change what it runs.
    agent_version = models.CharField(max_length=64, blank=True)
    agent_image = models.CharField(max_length=300, blank=True)
    agent_package = models.JSONField(default=dict, blank=True)
    # {"backend", "runtime"} a runner must match to take the job's tasks (a reproduction runs as its
    # original ran); empty: any runner of the queue.
    requirements = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]
        permissions = [("submit_job", "Can submit benchmark jobs (run agents on the site's runners)")]

    def __str__(self) -> str:
        return f"job {self.pk} ({self.agent_id}, {self.tasks.count()} tasks)"

    def save(self, *args, **kwargs) -> None:
        if self._state.adding and not self.agent_version and self.agent_id:
            self.agent_version, self.agent_image = self.agent.version, self.agent.image
            self.agent_package = self.agent.package
        super().save(*args, **kwargs)

    @property
    def status(self) -> str:
        """Derived from the tasks and their runs by runner.jobs.states (never stored)."""
        return job_status(self.task_list())

    @property
    def state(self) -> str:
        """The status in words, with the runs not scored counted (runner.jobs.states)."""
        return job_state(self.task_list())

    def task_list(self) -> list[JobTask]:
        """The tasks with their runs: the prefetched ones where a list view prefetched them."""
        if "tasks" in getattr(self, "_prefetched_objects_cache", {}):
            return list(self.tasks.all())
        return list(self.tasks.select_related("run"))

    def secrets(self) -> dict[str, str]:
        """The job's secrets in the clear, for the sandbox's environment and for redaction only."""
        from runner.host.secrets import unseal

        return unseal(self.sealed_env)

    @property
    def queue(self) -> str:
        from runner.jobs.queues import queue_for

        return queue_for(gpus=self.gpus, gpu_type=self.gpu_type)


class JobTask(models.Model):
    """One competition x seed of a job: what a runner claims, under a lease it keeps renewing."""

    Status = TaskStatus  # runner.jobs.states

    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.TIMED_OUT, Status.CANCELLED)

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="tasks")
    competition = models.ForeignKey("leaderboard.Competition", on_delete=models.PROTECT, related_name="job_tasks")
    seed = models.IntegerField(default=0)
    queue = models.CharField(max_length=200)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    max_attempts = models.PositiveIntegerField(default=2)
    lease_owner = models.CharField(max_length=100, blank=True, help_text="Token of the attempt holding the task")
    lease_expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    runner = models.ForeignKey(Runner, on_delete=models.SET_NULL, null=True, blank=True, related_name="tasks")
    gpu_indices = models.JSONField(default=list, blank=True)
    run = models.OneToOneField(
        "leaderboard.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="job_task"
    )
    error = models.TextField(blank=True)
    log_tail = models.TextField(blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    agent_started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "competition", "seed"]
        constraints = [
            models.UniqueConstraint(fields=["job", "competition", "seed"], name="unique_task_per_job_competition_seed"),
        ]

    def __str__(self) -> str:
        return f"task {self.pk} of job {self.job_id} ({self.competition_id}, seed {self.seed}, {self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def state(self) -> str:
        """How the agent stopped and what became of its submission, in words (runner.jobs.states)."""
        return task_state(self)

    @property
    def elapsed_s(self) -> float | None:
        """Seconds since the agent started, up to its end; None before it started."""
        if self.agent_started_at is None:
            return None
        return ((self.finished_at or timezone.now()) - self.agent_started_at).total_seconds()


class PublicDataVersion(models.Model):
    """The content hash of a competition's public data folder, computed once per state of the folder
    (runner.jobs.recipes): a runner re-reads only the files' names, sizes and times to know it is unchanged."""

    path = models.CharField(max_length=1000)
    signature = models.CharField(max_length=64, help_text="sha256 of every file's name, size and mtime")
    digest = models.CharField(max_length=64, help_text="sha256 of every file's name and content")
    n_files = models.PositiveIntegerField(default=0)
    n_bytes = models.BigIntegerField(default=0)
    computed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["path", "signature"], name="one_data_version_per_state")]

    def __str__(self) -> str:
        return f"{self.path}: {self.digest[:12]}"


class GpuSlot(models.Model):
    """One GPU device of a runner, held by at most one task: taken with a conditional UPDATE."""

    runner = models.ForeignKey(Runner, on_delete=models.CASCADE, related_name="gpu_slots")
    index = models.PositiveIntegerField()
    name = models.CharField(max_length=200, blank=True)
    task = models.ForeignKey(JobTask, on_delete=models.SET_NULL, null=True, blank=True, related_name="gpu_slots")

    class Meta:
        ordering = ["runner", "index"]
        constraints = [models.UniqueConstraint(fields=["runner", "index"], name="unique_gpu_per_runner")]

    def __str__(self) -> str:
        return f"GPU {self.index} of {self.runner_id}"


def validate_price_pattern(value: str) -> None:
    if "*" in value[:-1] or value == "*":
        raise ValidationError("a model name, or a prefix ending in one `*` (e.g. gpt-4o*): `*` only at the end")


class LlmPrice(models.Model):
    """What a language model's tokens cost, for the LLM gateway's cost totals and job cost limits."""

    pattern = models.CharField(
        max_length=200, unique=True, validators=[validate_price_pattern],
        help_text="A model name as the API takes it (gpt-4o-mini), or a prefix ending in * (claude-sonnet-4*); "
                  "the exact name wins, then the longest prefix",
    )
    input_usd_per_mtok = models.DecimalField("input, USD per 1M tokens", max_digits=12, decimal_places=6,
                                             validators=[MinValueValidator(0)])
    output_usd_per_mtok = models.DecimalField("output, USD per 1M tokens", max_digits=12, decimal_places=6,
                                              validators=[MinValueValidator(0)])
    note = models.CharField(max_length=300, blank=True, help_text="e.g. where the price comes from")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pattern"]
        verbose_name = "LLM price"

    def __str__(self) -> str:
        return f"{self.pattern}: ${self.input_usd_per_mtok} in, ${self.output_usd_per_mtok} out per 1M tokens"


class RemoteAttempt(models.Model):
    """What the site received from a remote runner for one attempt of a task (runner.api_v1): how many
    lines of each stream it has, so a retried request adds nothing twice, and the answers to its finish
    and to its releases (an attempt handed back is not counted, so the next claim has the same number)."""

    task = models.ForeignKey(JobTask, on_delete=models.CASCADE, related_name="remote_attempts")
    attempt = models.PositiveIntegerField()
    agent_lines = models.PositiveIntegerField(default=0)
    gateway_lines = models.PositiveIntegerField(default=0)
    finished = models.JSONField(null=True, blank=True, help_text="The answer to the finish, given again on a retry")
    releases = models.JSONField(
        default=list,
        blank=True,
        help_text="The runner handed the task back before its agent started (its engine was down): "
        "per claim, its lease owner and the answer, given again on a retry; they count toward failing it",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "attempt"], name="one_remote_attempt")]


class RemoteUpload(models.Model):
    """A file a remote runner uploads in chunks for one attempt of a task, staged on the site until the
    finish (or a snapshot) stores it; `received` bytes so far, checked against `size` and `sha256`."""

    task = models.ForeignKey(JobTask, on_delete=models.CASCADE, related_name="remote_uploads")
    attempt = models.PositiveIntegerField()
    key = models.CharField(max_length=64, help_text="The runner's name for the upload, unique per attempt")
    name = models.CharField(max_length=1000)
    kind = models.CharField(max_length=20)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    received = models.BigIntegerField(default=0)
    complete = models.BooleanField(default=False)
    used = models.BooleanField(default=False, help_text="Stored as an artifact or snapshot (never twice)")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "attempt", "key"], name="one_remote_upload_per_key")]

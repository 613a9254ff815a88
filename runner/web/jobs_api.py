"""REST API for jobs and runners: submit, list, read and cancel jobs; list runners and their GPUs.

Secrets go in with a job (`secrets`: names -> values), are sealed at once and never come out: the
output names them only.
"""

from __future__ import annotations

import json

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Prefetch
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.models import Experiment
from runner.host import secrets
from runner.jobs import access, reproduction, services, states
from runner.models import Job, JobTask, Runner
from webapp.parsers import check_depth

MAX_COMPETITIONS = 1000
MAX_SETTINGS_BYTES = 64 * 1024
MAX_SECRETS = 100


class JobInputSerializer(serializers.Serializer):
    """Every field bounded by the column it lands in (cpus becomes an experiment's integer cpu_count)."""

    agent = serializers.CharField(max_length=100, help_text="`baseline` (built in) or a registered agent's name")
    model = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    competitions = serializers.ListField(child=serializers.CharField(max_length=200), required=False, default=list,
                                         max_length=MAX_COMPETITIONS)
    split = serializers.CharField(max_length=100, required=False, allow_blank=True, allow_null=True, default=None)
    seeds = serializers.IntegerField(min_value=1, max_value=10_000, default=1)
    time_limit_minutes = serializers.FloatField()  # finite; its range is create_job's (MAX_TIME_LIMIT_MINUTES)
    gpus = serializers.IntegerField(min_value=0, max_value=1024, default=0)
    gpu_type = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    cpus = serializers.FloatField(default=1, min_value=0, max_value=services.MAX_CPUS)
    memory_gb = serializers.FloatField(default=4, min_value=0, max_value=services.MAX_MEMORY_GB)
    network = serializers.CharField(max_length=128, required=False, allow_null=True, default=None,
                                    help_text="An egress network for agents that call an API; none by default")
    secrets = serializers.DictField(child=serializers.CharField(max_length=10_000), required=False, default=dict,
                                    write_only=True, help_text="Environment for the sandbox only; stored encrypted")
    settings = serializers.DictField(required=False, default=dict,
                                     help_text=f"The agent's settings: JSON of at most {MAX_SETTINGS_BYTES} bytes")
    private = serializers.BooleanField(required=False, allow_null=True, default=None,
                                       help_text="Runs seen by you and staff only; default: the site's setting")

    def validate_secrets(self, value: dict) -> dict:
        if len(value) > MAX_SECRETS or any(len(name) > 200 for name in value):
            raise ValidationError(f"at most {MAX_SECRETS} secrets, each name at most 200 characters")
        return value

    def validate_settings(self, value: dict) -> dict:
        try:
            check_depth(value)
            size = len(json.dumps(value, allow_nan=False))
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        if size > MAX_SETTINGS_BYTES:
            raise ValidationError(f"settings are at most {MAX_SETTINGS_BYTES} bytes of JSON, not {size}")
        return value


class TaskOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    competition = serializers.CharField(source="competition.slug")
    seed = serializers.IntegerField()
    status = serializers.CharField()
    attempts = serializers.IntegerField()
    max_attempts = serializers.IntegerField()
    runner = serializers.CharField(source="runner.name", default=None)
    gpu_indices = serializers.ListField(child=serializers.IntegerField())
    run = serializers.IntegerField(source="run_id", allow_null=True)
    run_status = serializers.CharField(source="run.status", default=None)
    score = serializers.SerializerMethodField()
    valid_submission = serializers.SerializerMethodField()
    any_medal = serializers.SerializerMethodField()
    grading_error = serializers.SerializerMethodField(help_text="Why the run has no score, once grading ended")
    state = serializers.SerializerMethodField(help_text="How the agent stopped and what became of its submission")
    medal = serializers.SerializerMethodField()
    elapsed_s = serializers.SerializerMethodField()
    error = serializers.CharField()
    log_tail = serializers.CharField()

    def _graded(self, task):
        run = task.run
        return run if run is not None and run.status == run.Status.GRADED else None

    def get_score(self, task) -> float | None:
        return services.task_row(task)["score"]

    def get_valid_submission(self, task) -> bool | None:
        return services.task_row(task)["valid_submission"]

    def get_any_medal(self, task) -> bool | None:
        return services.task_row(task)["any_medal"]

    def get_grading_error(self, task) -> str | None:
        return services.task_row(task)["grading_error"]

    def get_state(self, task) -> str:
        return states.task_state(task)

    def get_medal(self, task) -> str | None:
        run = self._graded(task)
        return run.medals().label if run else None

    def get_elapsed_s(self, task) -> float | None:
        return None if task.elapsed_s is None else round(task.elapsed_s, 1)


class JobOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.SerializerMethodField()
    state = serializers.SerializerMethodField(help_text="The status in words, with the runs not scored counted")
    agent = serializers.CharField(source="agent.name")
    model = serializers.CharField(source="model_name")
    experiment = serializers.IntegerField(source="experiment_id")
    split = serializers.CharField()
    seeds = serializers.IntegerField()
    time_limit_minutes = serializers.SerializerMethodField()
    gpus = serializers.IntegerField()
    gpu_type = serializers.CharField()
    cpus = serializers.FloatField()
    memory_gb = serializers.FloatField()
    network = serializers.CharField(allow_null=True)
    private = serializers.BooleanField()
    secret_names = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username", default=None)
    created_at = serializers.DateTimeField()
    cancel_requested = serializers.BooleanField()
    counts = serializers.SerializerMethodField()
    tasks = serializers.SerializerMethodField()

    def get_status(self, job) -> str:
        return states.job_status(_tasks(job))

    def get_state(self, job) -> str:
        return states.job_state(_tasks(job))

    def get_time_limit_minutes(self, job) -> float:
        return job.time_limit_s / 60

    def get_secret_names(self, job) -> list[str]:
        return secret_names(job)

    def get_counts(self, job) -> dict[str, int]:
        counts: dict[str, int] = {}
        for task in _tasks(job):
            counts[task.status] = counts.get(task.status, 0) + 1
        return counts

    def get_tasks(self, job) -> list[dict]:
        return TaskOutputSerializer(_tasks(job), many=True).data


def secret_names(job: Job) -> list[str]:
    """The names of the job's secrets (never their values); a key that no longer decrypts says so."""
    try:
        return sorted(job.secrets())
    except secrets.SecretError:
        return ["(sealed with another key)"]


def _tasks(job: Job) -> list[JobTask]:
    """The job's tasks, read once per serialization (the list is cached on the instance)."""
    if not hasattr(job, "_task_list"):
        tasks = job.tasks.select_related("competition", "runner", "run")
        job._task_list = list(tasks.order_by("competition__slug", "seed"))
    return job._task_list


@method_decorator(never_cache, name="dispatch")  # a job's log tail may hold what its agent was given
class JobViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Jobs: `POST` submits (staff or the runner.submit_job permission), `GET` lists your own (staff: all)."""

    serializer_class = JobOutputSerializer
    permission_classes = [permissions.IsAuthenticated]
    lookup_value_regex = r"[0-9]+"  # anything else is no job: a 404 from the router, not a failed query

    def get_queryset(self):
        return access.visible_jobs(self.request.user).order_by("-created_at", "-id")

    @extend_schema(request=JobInputSerializer, responses={201: JobOutputSerializer})
    def create(self, request):
        data = JobInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = submit(request.user, data.validated_data)
        return Response(JobOutputSerializer(job).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: JobOutputSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        job = self.get_object()
        try:
            job = services.cancel_job(job=job, user=request.user)
        except PermissionError as exc:
            raise PermissionDenied(str(exc)) from None
        return Response(JobOutputSerializer(job).data)


def submit(user, data: dict) -> Job:
    """The one path from a form or the API to `services.create_job`: permission, limits, then the job."""
    try:
        access.check_may_submit(user)
    except access.JobRefused as exc:
        raise PermissionDenied(str(exc)) from None
    try:
        return services.create_job(
            user=user, agent=data["agent"], model=data.get("model", ""), competitions=data.get("competitions") or [],
            split=data.get("split") or None, seeds=data["seeds"], time_limit_minutes=data["time_limit_minutes"],
            gpus=data.get("gpus", 0), gpu_type=data.get("gpu_type", ""), cpus=data.get("cpus", 1),
            memory_gb=data.get("memory_gb", 4), settings=data.get("settings") or None,
            network=data.get("network") or None, env=data.get("secrets") or None, private=data.get("private"),
        )
    except services.JobError as exc:
        raise ValidationError({"detail": str(exc)}) from None
    except ImproperlyConfigured as exc:  # e.g. secrets given but no MEDALBOARD_SECRETS_KEY on this site
        raise ValidationError({"detail": f"this site cannot take the job as configured: {exc}"}) from None


class GpuOutputSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    name = serializers.CharField()
    memory_mb = serializers.IntegerField(allow_null=True)
    driver = serializers.CharField(allow_blank=True, help_text="the NVIDIA driver's version, as the runner detected it")
    task = serializers.IntegerField(allow_null=True)
    job = serializers.IntegerField(allow_null=True)


class RunnerOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    hostname = serializers.CharField()
    status = serializers.CharField(source="current_status")
    backend = serializers.CharField()
    queues = serializers.ListField(child=serializers.CharField())
    cpu_count = serializers.IntegerField()
    memory_gb = serializers.FloatField()
    concurrency = serializers.IntegerField()
    networks = serializers.ListField(child=serializers.CharField(), help_text="Networks its sandboxes may join")
    last_heartbeat = serializers.DateTimeField(allow_null=True)
    gpus = serializers.SerializerMethodField()
    running_tasks = serializers.SerializerMethodField()
    takes = serializers.CharField(help_text="Which tasks it takes, in words (Runner.takes)")

    def get_gpus(self, runner) -> list[dict]:
        return GpuOutputSerializer(gpu_holders(runner), many=True).data

    def get_running_tasks(self, runner) -> list[int]:
        return [t.pk for t in runner.active_tasks]


def gpu_holders(runner: Runner) -> list[dict]:
    """Each GPU of the runner with the task and job holding it (None when free)."""
    held = {slot.index: slot.task for slot in runner.gpu_slots.all()}
    rows = []
    for gpu in runner.gpus:
        task = held.get(gpu.get("index"))
        rows.append({"index": gpu.get("index"), "name": gpu.get("name", ""), "memory_mb": gpu.get("memory_mb"),
                     "driver": gpu.get("driver", ""), "task": task.pk if task else None,
                     "job": task.job_id if task else None})
    return rows


ACTIVE = (JobTask.Status.RUNNING, JobTask.Status.GRADING)


def runners_for_display():
    active = JobTask.objects.filter(status__in=ACTIVE).select_related("job", "competition").order_by("pk")
    running = Prefetch("tasks", queryset=active, to_attr="active_tasks")
    return Runner.objects.prefetch_related("gpu_slots__task", running).order_by("name")


class RunnerListView(APIView):
    """Every registered runner: status (offline after missed heartbeats), hardware, which task holds each GPU."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: RunnerOutputSerializer(many=True)})
    def get(self, request):
        return Response(RunnerOutputSerializer(runners_for_display(), many=True).data)


class ReproductionOutputSerializer(serializers.Serializer):
    experiment = serializers.IntegerField(help_text="The new experiment, a reproduction")
    reproduces = serializers.IntegerField(help_text="The experiment it reproduces")
    jobs = serializers.ListField(child=serializers.IntegerField())
    reproductions_url = serializers.CharField(help_text="Where its badge and comparison are read")


class ExperimentReproduceView(APIView):
    """`POST`: submit the experiment's jobs again into a new experiment that reproduces it (staff or
    the experiment's owner; the job limits apply). 400 says why it cannot be reproduced."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, responses={201: ReproductionOutputSerializer})
    def post(self, request, pk: int):
        experiment = Experiment.objects.visible_to(request.user).filter(pk=pk).first()
        if experiment is None:
            raise NotFound("no such experiment")
        try:
            made = reproduction.reproduce(user=request.user, experiment=experiment)
        except PermissionError as exc:
            raise PermissionDenied(str(exc)) from None
        except reproduction.ReproduceRefused as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response({"experiment": made.pk, "reproduces": experiment.pk,
                         "jobs": sorted(made.jobs.values_list("pk", flat=True)),
                         "reproductions_url": f"/api/experiments/{experiment.pk}/reproductions/"},
                        status=status.HTTP_201_CREATED)

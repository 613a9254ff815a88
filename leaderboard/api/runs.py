"""REST API for runs (upload, list, detail) and the leaderboard. Explicit input and output
serializers; a run's grading report and the competition's answers are never part of the output.
"""

from __future__ import annotations

import csv
import io

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.throttling import UserRateThrottle
from rest_framework.views import APIView

from leaderboard.analysis import page_cache, ranking, stats
from leaderboard.analysis import research as research_stats
from leaderboard.api.findings import FindingSerializer, findings_of
from leaderboard.api.intakes import IntakeSerializer
from leaderboard.api.pagination import RunCursorPagination
from leaderboard.api.similarity import SimilarReferenceSerializer, SimilarRunSerializer, similar_payload
from leaderboard.models import (
    INT32_MAX,
    INT64_MAX,
    MAX_MEMORY_GB,
    MAX_TIME_LIMIT_HOURS,
    Competition,
    Run,
    RunIntake,
    Split,
    Team,
)
from leaderboard.runs import artifacts, intake, quotas, snapshots
from leaderboard.trajectories.exports import csv_cell
from leaderboard.trust import flags


class StorageUnavailableError(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "the artifact storage cannot be written to right now"


# --- runs --------------------------------------------------------------------------------------


class RunInputSerializer(serializers.Serializer):
    competition = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default="",
        help_text="Competition id, e.g. spaceship-titanic; for a task outside the catalogue, its name "
                  "(only without a submission), or leave it out to use the name the trajectory gives",
    )
    task = serializers.CharField(
        max_length=300, required=False, allow_blank=True, default="",
        help_text="A task outside the catalogue (e.g. cifar10 for an MLAgentBench run), as the upload form's "
                  "task field; give this or competition",
    )
    agent = serializers.CharField(max_length=200)
    agent_version = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    model = serializers.CharField(max_length=200)
    seed = serializers.IntegerField(min_value=0, max_value=INT32_MAX, default=0)
    hardware = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    gpu_type = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    gpu_count = serializers.IntegerField(min_value=0, max_value=INT32_MAX, required=False, allow_null=True,
                                         default=None, help_text="Left out: not disclosed; 0: no GPU")
    cpu_count = serializers.IntegerField(min_value=0, max_value=INT32_MAX, required=False, allow_null=True,
                                         default=None)
    memory_gb = serializers.FloatField(min_value=0, max_value=MAX_MEMORY_GB, required=False, allow_null=True,
                                       default=None)
    time_limit_hours = serializers.FloatField(min_value=0, max_value=MAX_TIME_LIMIT_HOURS, required=False,
                                              allow_null=True, default=None)
    submission = serializers.FileField(required=False, allow_null=True, default=None,
                                       help_text="submission.csv, or a .zip/.tar.gz of the run folder")
    trajectory_files = serializers.ListField(child=serializers.FileField(), required=False, default=list)
    snapshots = serializers.ListField(
        child=serializers.FileField(), required=False, default=list,
        help_text="Submission snapshots, each named <elapsed-seconds>.csv (docs/snapshots.md)",
    )
    notes = serializers.CharField(required=False, allow_blank=True, default="", max_length=100_000)
    is_private = serializers.BooleanField(default=False)
    team = serializers.SlugRelatedField(slug_field="name", queryset=Team.objects.all(), required=False,
                                        allow_null=True, default=None,
                                        help_text="A team you belong to: the run joins the team's experiment")
    score = serializers.FloatField(required=False, allow_null=True, default=None,
                                   help_text="Self-reported score, only when no submission is uploaded")
    # Disclosures (leaderboard.trust.disclosures); what is left out shows as "not disclosed".
    internet = serializers.ChoiceField(["yes", "no"], required=False, allow_blank=True, default="",
                                       help_text="External knowledge or internet used by the agent")
    test_signal = serializers.ChoiceField(["yes", "no"], required=False, allow_blank=True, default="",
                                          help_text="Any signal from the test set (scores, labels) reached the agent")
    source_url = serializers.URLField(max_length=500, required=False, allow_blank=True, default="")
    report_url = serializers.URLField(max_length=500, required=False, allow_blank=True, default="")
    known_leakage = serializers.BooleanField(default=False, help_text="Known leakage of test information")
    leakage_note = serializers.CharField(max_length=10_000, required=False, allow_blank=True, default="")

    def validate_snapshots(self, files):
        try:
            snapshots.check_times([f.name for f in files])
        except snapshots.SnapshotError as exc:
            raise ValidationError(str(exc)) from None
        return files

    def validate(self, data):
        if data["competition"] and data["task"] and data["competition"] != data["task"]:
            raise ValidationError({"task": ["give a competition or a task, not both"]})
        data["competition"] = (data["competition"] or data["task"]).strip()
        catalogued = Competition.objects.filter(slug=data["competition"]).exists()
        if data["snapshots"] and not catalogued:
            raise ValidationError({"snapshots": [
                "snapshots are graded against a competition: name one in the catalogue"]})
        if data["submission"] is not None and not catalogued:
            raise ValidationError({"competition": [
                f"unknown competition {data['competition']!r}; see /api/competitions/ (only a trajectory, "
                "without a submission, can be uploaded for a task outside the catalogue)"]})
        if data["submission"] is None and data["score"] is None and not data["trajectory_files"]:
            raise ValidationError("upload a submission, a trajectory, or report a score")
        if data["submission"] is not None and data["score"] is not None:
            raise ValidationError("a run with a submission is graded here: leave out the self-reported score")
        return data


class RunFilterSerializer(serializers.Serializer):
    competition = serializers.CharField(required=False, allow_blank=True, max_length=200,
                                        help_text="Competition id, e.g. spaceship-titanic")
    experiment = serializers.IntegerField(required=False, min_value=1, max_value=INT64_MAX)
    status = serializers.ChoiceField(choices=Run.Status.choices, required=False, allow_blank=True)


class DisclosuresSerializer(serializers.Serializer):
    """What an experiment discloses (Experiment.disclosures): "not disclosed" or null where nobody said."""

    gpu_count = serializers.IntegerField(allow_null=True)
    gpu_type = serializers.CharField()
    cpu_count = serializers.IntegerField(allow_null=True, help_text="vCPUs")
    memory_gb = serializers.FloatField(allow_null=True, help_text="RAM")
    internet = serializers.CharField(source="get_internet_display",
                                     help_text="External knowledge or internet used: yes, no, not disclosed")
    test_signal = serializers.CharField(source="get_test_signal_display",
                                        help_text="Test-set signal reached the agent: yes, no, not disclosed")
    disclosed_by = serializers.CharField(source="get_disclosed_by_display", help_text="recorded by a Medalboard "
                                         "runner, stated by the uploader, or not disclosed")
    source_url = serializers.CharField()
    report_url = serializers.CharField()
    known_leakage = serializers.BooleanField()
    leakage_note = serializers.CharField()


class ExperimentBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    agent = serializers.CharField(source="agent.name")
    agent_version = serializers.CharField(source="agent.version")
    model = serializers.CharField(source="model.name")
    hardware = serializers.CharField()
    time_limit_hours = serializers.FloatField(allow_null=True)
    owner = serializers.CharField(source="owner_label", help_text="a user, 'team <name>', or empty "
                                  "(catalogue, demo and published data)")
    disclosures = DisclosuresSerializer(source="*")


class RunOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    competition = serializers.CharField(source="competition.slug", allow_null=True, default=None, read_only=True)
    task_name = serializers.CharField()
    competition_version = serializers.IntegerField(help_text="The competition's version the run was graded on")
    experiment = ExperimentBriefSerializer()
    seed = serializers.IntegerField()
    owner = serializers.CharField(source="owner.username", allow_null=True, default=None)
    is_private = serializers.BooleanField()
    origin = serializers.CharField()
    verification = serializers.CharField()
    demo = serializers.BooleanField(source="is_demo", help_text="Scored against synthetic demo answers (seed_demo)")
    status = serializers.CharField()
    state = serializers.CharField(help_text="What happened, in words: graded, no submission, invalid submission, "
                                            "waiting for answers, ...")
    score = serializers.FloatField(allow_null=True)
    submission_exists = serializers.BooleanField()
    valid_submission = serializers.BooleanField()
    medal = serializers.SerializerMethodField()
    any_medal = serializers.BooleanField()
    gold_medal = serializers.BooleanField()
    silver_medal = serializers.BooleanField()
    bronze_medal = serializers.BooleanField()
    above_median = serializers.BooleanField()
    human_rank = serializers.IntegerField(allow_null=True)
    beats_human_pct = serializers.FloatField(allow_null=True)
    grading_error = serializers.CharField()
    improvement_over_baseline = serializers.SerializerMethodField(help_text=(
        "research tasks: (score - baseline) / |baseline|, sign flipped when lower is better; null otherwise"))
    success = serializers.SerializerMethodField(help_text=(
        "research tasks: at least 10% better than the task's baseline (MLAgentBench); null otherwise"))
    failure_classes = serializers.ListField(child=serializers.CharField(), help_text=(
        "research tasks: MLAgentBench's failure classes that apply (out_of_memory, llm_connection, no_final_answer)"))
    n_steps = serializers.IntegerField()
    trajectory_format = serializers.CharField()
    cost_usd = serializers.FloatField(allow_null=True)
    tokens_in = serializers.IntegerField(allow_null=True)
    tokens_out = serializers.IntegerField(allow_null=True)
    usage_metered = serializers.BooleanField(
        help_text="tokens and cost counted by the LLM gateway on every call, not reported by the agent")
    created_at = serializers.DateTimeField()

    def get_medal(self, run: Run) -> str:
        return run.medals().label

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_improvement_over_baseline(self, run: Run) -> float | None:
        return research_stats.research_outcome(run)[0]

    @extend_schema_field(serializers.BooleanField(allow_null=True))
    def get_success(self, run: Run) -> bool | None:
        return research_stats.research_outcome(run)[1]

    def to_representation(self, run: Run) -> dict:
        """The declared fields' output, built directly: DRF's generic path (a source lookup and an
        isinstance chain per field) was half the time of a page of 100 runs. The declarations above
        still describe the schema; tests check this against DRF's own output."""
        competition, owner, e = run.competition, run.owner, run.experiment
        return {
            "id": run.pk, "competition": competition.slug if competition is not None else None,
            "task_name": str(run.task_name), "competition_version": int(run.competition_version),
            "experiment": {
                "id": e.pk, "agent": str(e.agent.name), "agent_version": str(e.agent.version),
                "model": str(e.model.name), "hardware": str(e.hardware),
                "time_limit_hours": _float(e.time_limit_hours), "owner": str(e.owner_label),
                "disclosures": e.disclosures(),
            },
            "seed": int(run.seed), "owner": owner.username if owner is not None else None,
            "is_private": bool(run.is_private), "origin": str(run.origin), "verification": str(run.verification),
            "demo": bool(run.is_demo), "status": str(run.status), "state": str(run.state),
            "score": _float(run.score), "submission_exists": bool(run.submission_exists),
            "valid_submission": bool(run.valid_submission), "medal": self.get_medal(run),
            "any_medal": bool(run.any_medal), "gold_medal": bool(run.gold_medal),
            "silver_medal": bool(run.silver_medal), "bronze_medal": bool(run.bronze_medal),
            "above_median": bool(run.above_median), "human_rank": _int(run.human_rank),
            "beats_human_pct": _float(run.beats_human_pct), "grading_error": str(run.grading_error),
            "improvement_over_baseline": self.get_improvement_over_baseline(run), "success": self.get_success(run),
            "failure_classes": [str(c) for c in run.failure_classes],
            "n_steps": int(run.n_steps), "trajectory_format": str(run.trajectory_format),
            "cost_usd": _float(run.cost_usd), "tokens_in": _int(run.tokens_in), "tokens_out": _int(run.tokens_out),
            "usage_metered": bool(run.usage_metered),
            "created_at": self.fields["created_at"].to_representation(run.created_at),
        }


def _float(value) -> float | None:
    return None if value is None else float(value)


def _int(value) -> int | None:
    return None if value is None else int(value)


class RunDetailSerializer(RunOutputSerializer):
    """A run as GET /api/runs/<id>/ serves it: the page's fields, what the rule checks found on it and its
    closest matches by code."""

    findings = FindingSerializer(many=True, read_only=True, help_text="What the rule checks found "
                                 "(leaderboard.trust): open, confirmed or dismissed by staff")
    similar_runs = SimilarRunSerializer(many=True, help_text="Runs you can see whose code is closest to this one's")
    similar_references = SimilarReferenceSerializer(many=True, help_text="Reference code of the competition")


class FormatCheckInputSerializer(serializers.Serializer):
    competition = serializers.SlugRelatedField(slug_field="slug", queryset=Competition.objects.all())
    submission = serializers.FileField()


class FormatCheckOutputSerializer(serializers.Serializer):
    competition = serializers.CharField()
    valid_submission = serializers.BooleanField()
    message = serializers.CharField()


class QuotaQuerySerializer(serializers.Serializer):
    competition = serializers.SlugRelatedField(slug_field="slug", queryset=Competition.objects.all())


class QuotaSerializer(serializers.Serializer):
    limit = serializers.IntegerField()
    used = serializers.IntegerField()
    remaining = serializers.IntegerField()
    resets_at = serializers.DateTimeField()


DISCLOSURE_FIELDS = tuple(DisclosuresSerializer().fields)
UPLOAD_DISCLOSURES = ("internet", "test_signal", "source_url", "report_url", "known_leakage", "leakage_note")

# The columns a page of runs shows (RunOutputSerializer), of the run and what it joins: the rest (a
# competition's description, grading reports, warnings, timelines) is never read for a page.
PAGE_COLUMNS = (
    "id", "competition_id", "task_name", "competition_version", "experiment_id", "seed", "owner_id", "is_private",
    "origin", "verification", "is_demo", "status", "score", "submission_exists", "valid_submission", "any_medal",
    "gold_medal", "silver_medal", "bronze_medal", "above_median", "human_rank", "beats_human_pct",
    "grading_error", "n_steps", "trajectory_format", "cost_usd", "tokens_in", "tokens_out", "usage_metered",
    "created_at", "competition__id", "competition__slug", "owner__id", "owner__username", "failure_classes",
    "competition__kind", "competition__baseline_score", "competition__is_lower_better",
    "experiment__id", "experiment__agent_id", "experiment__model_id", "experiment__hardware",
    "experiment__time_limit_hours", "experiment__owner_id", "experiment__team_id", "experiment__owner_key",
    *(f"experiment__{name}" for name in DISCLOSURE_FIELDS),
    "experiment__agent__id", "experiment__agent__name", "experiment__agent__version",
    "experiment__model__id", "experiment__model__name", "experiment__owner__id", "experiment__owner__username",
    "experiment__team__id", "experiment__team__name",
)


class RunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Runs you can see: public ones, plus your private ones (staff see all)."""

    parser_classes = [MultiPartParser, FormParser]
    serializer_class = RunOutputSerializer
    pagination_class = RunCursorPagination
    lookup_value_regex = r"[0-9]+"

    def get_queryset(self):
        runs = Run.objects.visible_to(self.request.user).select_related(
            "competition", "experiment__agent", "experiment__model", "experiment__owner", "experiment__team", "owner"
        ).only(*PAGE_COLUMNS)
        query = RunFilterSerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        for param, lookup in (("competition", "competition__slug"), ("experiment", "experiment_id"),
                              ("status", "status")):
            if (value := query.validated_data.get(param)) not in (None, ""):
                runs = runs.filter(**{lookup: value})
        return runs

    @extend_schema(parameters=[RunFilterSerializer])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(responses={200: RunDetailSerializer})
    def retrieve(self, request, *args, **kwargs):
        """One run, with what the rule checks found on it (`findings`) and its closest matches by code."""
        run = self.get_object()
        return Response({**self.get_serializer(run).data, "findings": findings_of(run),
                         **similar_payload(run, request.user)})

    @extend_schema(request=RunInputSerializer, responses={
        201: RunOutputSerializer, 200: RunOutputSerializer,
        202: OpenApiResponse(IntakeSerializer, description="Received and still importing: follow status_url"),
        400: OpenApiResponse(description="Refused, with the reason in detail"),
        429: OpenApiResponse(description="Today's grading quota for this competition is used"),
    })
    def create(self, request, *args, **kwargs):
        """Upload a run. Files are staged and imported by a worker: when the import ends within
        MEDALBOARD_INTAKE_WAIT_S the answer is the run (201, or 200 for an identical earlier upload)
        or the reason it was refused (400, 429); otherwise 202 with the intake to follow."""
        data = RunInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        metadata = {
            "competition": v["competition"], "agent_name": v["agent"], "agent_version": v["agent_version"],
            "model_name": v["model"], "seed": v["seed"], "hardware": v["hardware"], "gpu_type": v["gpu_type"],
            "gpu_count": v["gpu_count"], "cpu_count": v["cpu_count"], "memory_gb": v["memory_gb"],
            "time_limit_hours": v["time_limit_hours"], "notes": v["notes"], "is_private": v["is_private"],
            "self_reported_score": v["score"], "team": v["team"].pk if v["team"] else None,
            "disclosures": {name: v[name] for name in UPLOAD_DISCLOSURES},
        }
        try:
            received = intake.receive(owner=request.user, metadata=metadata, submission=v["submission"],
                                      trajectory_files=v["trajectory_files"], snapshot_files=v["snapshots"])
        except quotas.QuotaExceeded as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_429_TOO_MANY_REQUESTS)
        except artifacts.StorageUnavailable as exc:
            raise StorageUnavailableError(str(exc)) from exc
        return intake_response(intake.wait(received), request.user)

    @extend_schema(request=FormatCheckInputSerializer, responses={200: FormatCheckOutputSerializer})
    @action(detail=False, methods=["post"])
    def check(self, request):
        """Check a submission's format without grading it: no score, no run, no quota used."""
        data = FormatCheckInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        competition = data.validated_data["competition"]
        try:
            result = quotas.check_format(competition=competition, submission=data.validated_data["submission"])
        except quotas.TooLargeToCheck as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        return Response({"competition": competition.slug, "valid_submission": result.valid,
                         "message": result.message})

    def get_throttles(self):
        throttles = super().get_throttles()
        if self.action in ("create", "check"):  # grading is the costly and the revealing part: a tighter rate
            throttles.append(_UploadThrottle())
        return throttles


def intake_response(received: RunIntake, user) -> Response:
    """The answer to an upload: the run, the reason it was refused, or (still importing) the intake."""
    if received.status == RunIntake.Status.FAILED:
        if received.failure == RunIntake.Failure.QUOTA:
            return Response({"detail": received.error}, status=status.HTTP_429_TOO_MANY_REQUESTS)
        if received.failure == RunIntake.Failure.STORAGE:
            raise StorageUnavailableError(received.error)
        raise ValidationError({"detail": received.error})
    if received.status != RunIntake.Status.IMPORTED or received.run is None:
        return Response(IntakeSerializer(received).data, status=status.HTTP_202_ACCEPTED)
    run = Run.objects.select_related("competition", "experiment__agent", "experiment__model", "owner").get(
        pk=received.run_id)
    body = RunOutputSerializer(run).data
    if received.note:  # an identical earlier upload came back
        body["detail"] = f"this upload is {received.note}"
    if run.competition is not None:
        body["grading_quota"] = quotas.grading_quota(user=user, competition=run.competition).as_dict()
    return Response(body, status=status.HTTP_200_OK if received.note else status.HTTP_201_CREATED)


class _UploadThrottle(UserRateThrottle):
    scope = "uploads"


class GradingQuotaView(APIView):
    """Your graded uploads left today for a competition (MEDALBOARD_DAILY_GRADING_QUOTA)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(parameters=[QuotaQuerySerializer], responses=QuotaSerializer)
    def get(self, request):
        query = QuotaQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(quotas.grading_quota(user=request.user, competition=query.validated_data["competition"])
                        .as_dict())


# --- leaderboard -------------------------------------------------------------------------------


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        rows = data.get("results", []) if isinstance(data, dict) else []
        if not rows:
            return ""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows({key: csv_cell(value) for key, value in row.items()} for row in rows)
        return out.getvalue()


def rows_to_csv(rows: list[dict]) -> str:
    return CSVRenderer().render({"results": rows})


class LeaderboardQuerySerializer(serializers.Serializer):
    split = serializers.SlugField(default="lite", help_text="lite (= low), medium, high, all (= split75), "
                                  "or any other split's id, e.g. dev, systemcard, demo")
    agent = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    model = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    hardware = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    verified = serializers.BooleanField(default=False)
    pad = serializers.BooleanField(default=False)
    sort = serializers.CharField(required=False, default="-any_medal", max_length=100)
    internet = serializers.ChoiceField(["yes", "no", "unknown"], required=False, allow_blank=True, default="",
                                       help_text="External knowledge or internet used (unknown: not disclosed)")
    test_signal = serializers.ChoiceField(["yes", "no", "unknown"], required=False, allow_blank=True, default="",
                                          help_text="Test-set signal used (unknown: not disclosed)")
    leakage = serializers.ChoiceField(["yes", "no"], required=False, allow_blank=True, default="",
                                      help_text="Marked with known leakage, or not")
    no_findings = serializers.BooleanField(default=False, help_text="Only experiments none of whose runs on the "
                                           "split has an open or confirmed rule-check finding")


class LeaderboardRowSerializer(serializers.Serializer):
    experiment_id = serializers.IntegerField()
    agent = serializers.CharField()
    model = serializers.CharField()
    owner = serializers.CharField(help_text="Whose results: a user, 'team <name>', or empty (catalogue and demo)")
    hardware = serializers.CharField()
    time_limit_hours = serializers.FloatField(allow_null=True)
    n_seeds = serializers.IntegerField(help_text="Complete seeds counted (all seeds with runs when pad=true)")
    n_runs = serializers.IntegerField()
    n_runs_in_split = serializers.IntegerField()
    n_competitions = serializers.IntegerField()
    verification = serializers.CharField()
    demo = serializers.BooleanField(help_text="Some runs were scored against synthetic demo answers (seed_demo)")
    any_medal_pct = serializers.FloatField(allow_null=True)
    any_medal_sem = serializers.FloatField(allow_null=True)
    gold_medal_pct = serializers.FloatField(allow_null=True)
    gold_medal_sem = serializers.FloatField(allow_null=True)
    silver_medal_pct = serializers.FloatField(allow_null=True)
    silver_medal_sem = serializers.FloatField(allow_null=True)
    bronze_medal_pct = serializers.FloatField(allow_null=True)
    bronze_medal_sem = serializers.FloatField(allow_null=True)
    above_median_pct = serializers.FloatField(allow_null=True)
    above_median_sem = serializers.FloatField(allow_null=True)
    valid_submission_pct = serializers.FloatField(allow_null=True)
    valid_submission_sem = serializers.FloatField(allow_null=True)
    pass_at_1_pct = serializers.FloatField(allow_null=True)
    cost_usd = serializers.FloatField(allow_null=True)
    tokens = serializers.FloatField(allow_null=True)
    competition_versions = serializers.CharField(
        help_text="The versions of the split's changed competitions this row's runs were graded on, e.g. "
                  "'spaceship-titanic v2' (empty: none changed); rows of different versions are separate")
    gpu_count = serializers.IntegerField(allow_null=True)
    gpu_type = serializers.CharField()
    cpu_count = serializers.IntegerField(allow_null=True)
    memory_gb = serializers.FloatField(allow_null=True)
    internet = serializers.CharField()
    test_signal = serializers.CharField()
    disclosed_by = serializers.CharField()
    source_url = serializers.CharField()
    report_url = serializers.CharField()
    known_leakage = serializers.BooleanField()
    leakage_note = serializers.CharField()
    findings = serializers.IntegerField(help_text="Runs on the split with an open or confirmed rule-check finding")


def leaderboard_rows(params: dict, user) -> tuple[Split, list[dict]]:
    """The leaderboard's rows as dicts, cached per version and audience (leaderboard.analysis.page_cache)."""
    return page_cache.for_viewer(user, verified_only=bool(params.get("verified")),
                                 key=("rows", sorted(params.items())),
                                 compute=lambda scope: scoped_rows(params, user, scope))


def scoped_rows(params: dict, user, scope: tuple) -> tuple[Split, list[dict]]:
    """The rows for a viewer's scope (reading.viewer_scope's audience and own experiments)."""
    filters = stats.LeaderboardFilters(agent=params.get("agent", ""), model=params.get("model", ""),
                                       hardware=params.get("hardware", ""),
                                       verified_only=bool(params.get("verified")),
                                       internet=params.get("internet", ""), test_signal=params.get("test_signal", ""),
                                       leakage=params.get("leakage", ""))
    split, rows = ranking.leaderboard(split_slug=params.get("split") or "lite", user=user, filters=filters,
                                    pad=bool(params.get("pad")), scope=scope)
    rows = [row.row() for row in stats.sort_rows(rows, params.get("sort") or "-any_medal")]
    return split, with_findings(rows, split, scope, user, only_clean=bool(params.get("no_findings")))


def with_findings(rows: list[dict], split: Split, scope: tuple, user, *, only_clean: bool) -> list[dict]:
    """Each row with `findings` (its flagged runs); only the rows without any when `only_clean`."""
    audience, own = scope
    counts = flags.flagged_runs(experiment_ids=[r["experiment_id"] for r in rows], split=split,
                                audience=audience, user=user, own=own)
    for row in rows:
        row["findings"] = counts.get(row["experiment_id"], 0)
    return [row for row in rows if not row["findings"]] if only_clean else rows


class LeaderboardAPIView(APIView):
    """MLE-bench headline per experiment: % of the split's competitions with a medal, mean ± SEM over seeds."""

    renderer_classes = [JSONRenderer, CSVRenderer, BrowsableAPIRenderer]

    @extend_schema(
        parameters=[LeaderboardQuerySerializer,
                    OpenApiParameter("format", str, enum=["json", "csv"], description="csv for a CSV download")],
        responses=LeaderboardRowSerializer(many=True),
    )
    def get(self, request):
        query = LeaderboardQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            split, rows = leaderboard_rows(query.validated_data, request.user)
        except Split.DoesNotExist:
            raise ValidationError({"split": [f"unknown split {query.validated_data['split']!r}"]}) from None
        response = Response({"split": split.slug, "count": len(rows), "results": rows})
        if getattr(request.accepted_renderer, "format", "") == "csv":
            response["Content-Disposition"] = f'attachment; filename="medalboard-{split.slug}.csv"'
        return response

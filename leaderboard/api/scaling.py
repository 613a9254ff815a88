"""The scaling curves' JSON and CSV endpoints: /api/scaling/time/, /api/scaling/pass-at-k/ and
/api/scaling/hardware/ (leaderboard.analysis.scaling computes them; the pages draw the same payloads)."""

from __future__ import annotations

import math

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.analysis import scaling, stats
from leaderboard.api.runs import rows_to_csv
from leaderboard.lib.durations import parse_hours
from leaderboard.models import INT64_MAX, Split


class ScalingQuerySerializer(serializers.Serializer):
    split = serializers.SlugField(default="lite",
                                  help_text="lite (= low), medium, high, all (= split75), or a split id")
    agent = serializers.CharField(required=False, allow_blank=True, default="", help_text="agent name contains")
    model = serializers.CharField(required=False, allow_blank=True, default="", help_text="model name contains")
    hardware = serializers.CharField(required=False, allow_blank=True, default="", help_text="hardware contains")
    experiment = serializers.ListField(
        child=serializers.CharField(), required=False, default=list,
        help_text="experiment ids (repeat the parameter or separate with commas); none: every experiment",
    )
    pad = serializers.BooleanField(default=False, help_text="count incomplete seeds, a missing competition = no medal")
    hours = serializers.CharField(required=False, allow_blank=True, default="",
                                  help_text="time curve only: budgets, a bare number in hours, or with a unit "
                                            "(s, min, h): e.g. 1,2,4,8,24 or 30s,5min,1h")

    def validate_experiment(self, values: list[str]) -> list[int]:
        parts = [part.strip() for value in values for part in value.split(",") if part.strip()]
        # ASCII digits only ('²' passes isdigit() and fails int()), and ids a 64-bit column holds
        if not all(part.isascii() and part.isdigit() and len(part) < 20 and 0 < int(part) <= INT64_MAX
                   for part in parts):
            raise ValidationError("experiment ids are positive whole numbers")
        return sorted({int(part) for part in parts})

    def validate_hours(self, value: str) -> list[float]:
        parts = [part.strip() for part in value.split(",") if part.strip()]
        try:
            hours = [parse_hours(part) for part in parts]
        except ValueError:
            raise ValidationError("hours are durations separated by commas: numbers of hours (1,2,4,8,24) "
                                  "or with a unit (30s,5min,1h)") from None
        if not all(math.isfinite(h) and h >= 0 for h in hours):
            raise ValidationError("hours are non-negative finite durations, e.g. 1,2,4,8,24 or 30s,5min")
        if len(set(hours)) > scaling.MAX_BUDGETS:
            raise ValidationError(f"at most {scaling.MAX_BUDGETS} budgets")
        return hours


CURVES = {
    "time": lambda selection, p: scaling.time_curve(selection, p["hours"] or None, pad=p["pad"]),
    "pass-at-k": lambda selection, p: scaling.pass_at_k_curve(selection, pad=p["pad"]),
    "hardware": lambda selection, p: scaling.hardware_curve(selection, pad=p["pad"]),
}


def parse_query(data) -> dict:
    """Validated query parameters; raises ValidationError with a message per bad parameter."""
    query = ScalingQuerySerializer(data=data)
    query.is_valid(raise_exception=True)
    return dict(query.validated_data)


def curve_payload(kind: str, params: dict, user) -> dict:
    """The payload of one curve for one user's visible runs; raises Split.DoesNotExist."""
    filters = stats.LeaderboardFilters(agent=params["agent"], model=params["model"], hardware=params["hardware"])
    selection = scaling.select(split_slug=params["split"], user=user, filters=filters,
                               experiment_ids=params["experiment"])
    return CURVES[kind](selection, params)


class ScalingCSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, dict) and "split" in data:
            return rows_to_csv(scaling.csv_rows(data))
        return rows_to_csv([{"error": str(data)}])


class ScalingAPIView(APIView):
    renderer_classes = [JSONRenderer, ScalingCSVRenderer, BrowsableAPIRenderer]
    kind = "time"

    def get(self, request):
        params = parse_query(request.query_params)
        try:
            payload = curve_payload(self.kind, params, request.user)
        except Split.DoesNotExist:
            raise ValidationError({"split": [f"unknown split {params['split']!r}"]}) from None
        response = Response(payload)
        if getattr(request.accepted_renderer, "format", "") == "csv":
            name = f"medalboard-scaling-{self.kind}-{params['split']}.csv"
            response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class _ExperimentFields(serializers.Serializer):
    experiment_id = serializers.IntegerField()
    agent = serializers.CharField()
    model = serializers.CharField()
    hardware = serializers.CharField()
    time_limit_hours = serializers.FloatField(allow_null=True)
    n_seeds = serializers.IntegerField(help_text="Seeds counted (complete ones, or all with pad=true)")


class TimePointSerializer(serializers.Serializer):
    hours = serializers.FloatField()
    any_medal_pct = serializers.FloatField(allow_null=True)
    any_medal_sem = serializers.FloatField(allow_null=True)
    n_seeds = serializers.IntegerField()


class TimeExperimentSerializer(_ExperimentFields):
    points = TimePointSerializer(many=True)


class TimeCurveSerializer(serializers.Serializer):
    split = serializers.CharField()
    hours = serializers.ListField(child=serializers.FloatField())
    experiments = TimeExperimentSerializer(many=True)


class PassAtKPointSerializer(serializers.Serializer):
    k = serializers.IntegerField()
    pass_at_k_pct = serializers.FloatField(allow_null=True)
    ci_low_pct = serializers.FloatField(allow_null=True)
    ci_high_pct = serializers.FloatField(allow_null=True)


class PassAtKExperimentSerializer(_ExperimentFields):
    points = PassAtKPointSerializer(many=True)


class PassAtKCurveSerializer(serializers.Serializer):
    split = serializers.CharField()
    experiments = PassAtKExperimentSerializer(many=True)


class HardwareExperimentSerializer(serializers.Serializer):
    experiment_id = serializers.IntegerField()
    hardware = serializers.CharField()
    gpu_type = serializers.CharField()
    gpu_count = serializers.IntegerField(allow_null=True, help_text="null: not disclosed")
    gpus_used = serializers.CharField(help_text="the GPUs its runs' sandboxes got, as their runners recorded them "
                                                "(model and driver; '; ' between kinds); 'none' for CPU-only job runs")
    cpu_count = serializers.IntegerField(allow_null=True)
    memory_gb = serializers.FloatField(allow_null=True)
    n_seeds = serializers.IntegerField()
    any_medal_pct = serializers.FloatField(allow_null=True)
    any_medal_sem = serializers.FloatField(allow_null=True)


class HardwareGroupSerializer(serializers.Serializer):
    agent = serializers.CharField()
    model = serializers.CharField()
    time_limit_hours = serializers.FloatField(allow_null=True)
    experiments = HardwareExperimentSerializer(many=True)


class HardwareCurveSerializer(serializers.Serializer):
    split = serializers.CharField()
    groups = HardwareGroupSerializer(many=True)


_FORMAT = OpenApiParameter("format", str, enum=["json", "csv"], description="csv: one row per point drawn")


class TimeCurveAPIView(ScalingAPIView):
    """Any-medal % against time budget: each run graded by its latest snapshot at or before the budget."""

    kind = "time"

    @extend_schema(parameters=[ScalingQuerySerializer, _FORMAT], responses=TimeCurveSerializer)
    def get(self, request):
        return super().get(request)


class PassAtKAPIView(ScalingAPIView):
    """pass@k against k (unbiased estimator averaged over the split) with a bootstrap 95% interval."""

    kind = "pass-at-k"

    @extend_schema(parameters=[ScalingQuerySerializer, _FORMAT], responses=PassAtKCurveSerializer)
    def get(self, request):
        return super().get(request)


class HardwareAPIView(ScalingAPIView):
    """Any-medal % per experiment, grouped with the experiments that differ from it only in hardware."""

    kind = "hardware"

    @extend_schema(parameters=[ScalingQuerySerializer, _FORMAT], responses=HardwareCurveSerializer)
    def get(self, request):
        return super().get(request)

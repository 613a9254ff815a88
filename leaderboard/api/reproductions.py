"""`GET /api/experiments/<id>/reproductions/`: whether an experiment can be reproduced here, what it
reproduces, and each reproduction's badge with the comparison behind it (leaderboard.trust.reproductions)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.models import Competition, Experiment
from leaderboard.trust import reproductions


class PairedTestSerializer(serializers.Serializer):
    n = serializers.IntegerField()
    mean_diff = serializers.FloatField(allow_null=True, help_text="reproduction - original")
    sem_diff = serializers.FloatField(allow_null=True)
    t_pvalue = serializers.FloatField(allow_null=True)
    wilcoxon_pvalue = serializers.FloatField(allow_null=True)


class EstimateSerializer(serializers.Serializer):
    mean = serializers.FloatField(allow_null=True)
    sem = serializers.FloatField(allow_null=True)
    n = serializers.IntegerField()


class CompetitionRowSerializer(serializers.Serializer):
    competition = serializers.SerializerMethodField()
    seeds = serializers.ListField(child=serializers.IntegerField(), help_text="seeds scored on both sides")
    original = EstimateSerializer(help_text="score over those seeds")
    reproduction = EstimateSerializer()
    score_test = PairedTestSerializer(help_text="paired by seed")
    tolerance = serializers.FloatField(allow_null=True, help_text="2 SEM of the original (plus float noise)")
    within = serializers.BooleanField()
    one_sided = serializers.ListField(child=serializers.IntegerField(), help_text="seeds scored on one side only")
    original_medal_rate = serializers.FloatField(allow_null=True)
    reproduction_medal_rate = serializers.FloatField(allow_null=True)

    def get_competition(self, row) -> str:
        return self.context["slugs"].get(row.competition_id, "")


class ReproductionSerializer(serializers.Serializer):
    experiment = serializers.IntegerField(source="experiment.pk")
    owner = serializers.CharField(source="experiment.owner_label")
    created_at = serializers.DateTimeField(source="experiment.created_at")
    badge = serializers.ChoiceField(choices=[reproductions.PENDING, reproductions.REPRODUCED,
                                             reproductions.NOT_REPRODUCED], source="assessment.badge")
    unfinished_tasks = serializers.IntegerField(source="assessment.unfinished_tasks")
    original_medal_rate = serializers.FloatField(source="assessment.original_medal_rate", allow_null=True)
    reproduction_medal_rate = serializers.FloatField(source="assessment.reproduction_medal_rate", allow_null=True)
    medal_rate_test = PairedTestSerializer(source="assessment.overall.medal", help_text="paired by competition")
    beats_humans_test = PairedTestSerializer(source="assessment.overall.beats_humans")
    changed = serializers.ListField(child=serializers.CharField(), source="assessment.changed",
                                    help_text="recipe keys that differ from the original's, e.g. agent.version")
    competitions = CompetitionRowSerializer(source="assessment.rows", many=True)


class ReproductionsOutputSerializer(serializers.Serializer):
    experiment = serializers.IntegerField()
    reproducible = serializers.BooleanField(help_text="false: its runs were uploaded, so no job can run again")
    reproduces = serializers.IntegerField(allow_null=True, help_text="the experiment this one reproduces")
    reproductions = ReproductionSerializer(many=True)


class ExperimentReproductionsView(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: ReproductionsOutputSerializer})
    def get(self, request, pk: int):
        experiment = get_object_or_404(Experiment.objects.visible_to(request.user), pk=pk)
        found = reproductions.reproductions_of(experiment, request.user)
        ids = {row.competition_id for _, assessment in found for row in assessment.rows}
        slugs = dict(Competition.objects.filter(pk__in=ids).values_list("pk", "slug"))
        original = reproductions.visible_original(experiment, request.user)
        data = {"experiment": experiment.pk, "reproduces": original.pk if original else None,
                "reproducible": reproductions.can_be_reproduced(experiment.runs.visible_to(request.user)
                                                                .only("origin")),
                "reproductions": [{"experiment": e, "assessment": a} for e, a in found]}
        return Response(ReproductionsOutputSerializer(data, context={"slugs": slugs}).data)

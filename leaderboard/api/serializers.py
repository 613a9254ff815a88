from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from leaderboard.grading import grading_available
from leaderboard.models import Competition


class CompetitionSerializer(serializers.ModelSerializer):
    """Public fields only: the answers' location lives in another model and is never serialized."""

    id = serializers.CharField(source="slug")
    metric = serializers.CharField(source="config_metric")
    is_lower_better = serializers.BooleanField(allow_null=True)
    splits = serializers.SlugRelatedField(many=True, read_only=True, slug_field="slug")
    has_human_baseline = serializers.BooleanField(read_only=True)
    grading_available = serializers.SerializerMethodField(help_text="Whether submissions can be graded here")
    public_data_registered = serializers.BooleanField(
        read_only=True, help_text="Whether the public prepared data (what a sandbox mounts) is registered")

    class Meta:
        model = Competition
        fields = [
            "id", "name", "metric", "is_lower_better", "n_teams", "splits", "awards_medals",
            "has_human_baseline", "leaderboard_kind", "grading_available", "public_data_registered",
            "gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold", "kind", "baseline_score",
            "version", "known_issues",
        ]
        read_only_fields = fields


    def get_grading_available(self, competition: Competition) -> bool:
        return grading_available(competition)


class ResearchTaskSerializer(serializers.Serializer):
    """What a research task gives the agent and how its baseline was found; never where its scripts are."""

    entry_script = serializers.CharField()
    read_only_files = serializers.SerializerMethodField()
    time_limit_s = serializers.FloatField()
    baseline_status = serializers.CharField()
    baseline_error = serializers.CharField()
    baseline_seconds = serializers.FloatField(allow_null=True)

    def get_read_only_files(self, task) -> list[str]:
        return sorted(task.read_only_files)


class CompetitionVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    note = serializers.CharField(help_text="What changed")
    created_at = serializers.DateTimeField()


class CompetitionDetailSerializer(CompetitionSerializer):
    research = serializers.SerializerMethodField(help_text="research tasks: the starter and its baseline")
    versions = CompetitionVersionSerializer(
        many=True, read_only=True, help_text="The versions after the first, oldest first: what changed and when")

    class Meta(CompetitionSerializer.Meta):
        fields = [*CompetitionSerializer.Meta.fields, "competition_type", "description", "research", "versions"]
        read_only_fields = fields

    @extend_schema_field(ResearchTaskSerializer(allow_null=True))
    def get_research(self, competition: Competition) -> dict | None:
        task = getattr(competition, "research", None) if competition.kind == Competition.Kind.RESEARCH else None
        return ResearchTaskSerializer(task).data if task is not None else None

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
            "gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold", "version", "known_issues",
        ]
        read_only_fields = fields


    def get_grading_available(self, competition: Competition) -> bool:
        return grading_available(competition)


class CompetitionVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    note = serializers.CharField(help_text="What changed")
    created_at = serializers.DateTimeField()


class CompetitionDetailSerializer(CompetitionSerializer):
    versions = CompetitionVersionSerializer(
        many=True, read_only=True, help_text="The versions after the first, oldest first: what changed and when")

    class Meta(CompetitionSerializer.Meta):
        fields = [*CompetitionSerializer.Meta.fields, "competition_type", "description", "versions"]
        read_only_fields = fields

"""A saved question's input and output, one serializer for the page's form and the API: a search is
checked as the search checks it (its query parsed, its filters through SearchParams), a failure
filter needs its signature."""

from __future__ import annotations

from rest_framework import serializers

from leaderboard.analysis.stats import resolve_split
from leaderboard.models import INT32_MAX, Split
from leaderboard.questions.models import SavedQuestion
from leaderboard.search.params import SearchParams
from leaderboard.search.query import QueryError, parse

FILTER_NAMES = [name for name in SearchParams().fields if name not in ("q", "cursor")]


class QuestionSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    filters = serializers.DictField(
        required=False,
        default=dict,
        help_text=f"A search's filters, as /api/search/ takes them: {', '.join(FILTER_NAMES)}",
    )

    class Meta:
        model = SavedQuestion
        fields = [
            "id",
            "name",
            "kind",
            "query",
            "filters",
            "signature",
            "is_public",
            "owner",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "owner", "created_at", "updated_at"]

    def validate_name(self, name: str) -> str:
        name = name.strip()
        owner = self.context["request"].user
        taken = SavedQuestion.objects.filter(owner=owner, name=name).exclude(pk=getattr(self.instance, "pk", None))
        if taken.exists():
            raise serializers.ValidationError("you already have a question of this name")
        return name

    def validate(self, data: dict) -> dict:
        current = self.instance
        kind = data.get("kind", current.kind if current else "")
        if kind == SavedQuestion.Kind.FAILURE:
            signature = data.get("signature", current.signature if current else "").strip()
            if not signature:
                raise serializers.ValidationError({"signature": ["a failure question needs a signature"]})
            return {**data, "signature": signature, "query": "", "filters": {}}
        query = data.get("query", current.query if current else "")
        filters = data.get("filters", current.filters if current else {})
        return {**data, "query": query, "filters": _search_filters(query, filters), "signature": ""}


def _search_filters(query: str, filters: dict) -> dict:
    """The filters as the search takes them, only those given; a query the search would refuse is refused."""
    unknown = sorted(set(filters) - set(FILTER_NAMES))
    if unknown:
        raise serializers.ValidationError({"filters": [f"no such filter: {', '.join(unknown)}"]})
    try:
        parse(query)
    except QueryError as exc:
        raise serializers.ValidationError({"query": [str(exc)]}) from exc
    params = SearchParams(data={**{k: v for k, v in filters.items() if v not in ("", None)}, "q": query})
    if not params.is_valid():
        raise serializers.ValidationError(
            {"filters": [f"{k}: {' '.join(map(str, v))}" for k, v in params.errors.items()]}
        )
    return {k: v for k, v in params.validated_data.items() if k in FILTER_NAMES and v not in ("", None)}


class ScopeSerializer(serializers.Serializer):
    """Whose runs a question is asked of: an experiment's, optionally on a split's competitions."""

    experiment = serializers.IntegerField(min_value=1, max_value=INT32_MAX)
    split = serializers.CharField(required=False, default="", max_length=100)

    def validate_split(self, slug: str) -> str:
        try:
            return resolve_split(slug).slug if slug else ""
        except Split.DoesNotExist:
            raise serializers.ValidationError("no such split") from None


class MatchSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    url = serializers.CharField(help_text="The run's page at the matching step (search) or its error step (failure)")


class MatchesSerializer(serializers.Serializer):
    question = serializers.IntegerField()
    experiment = serializers.IntegerField()
    split = serializers.CharField()
    count = serializers.IntegerField(help_text="Runs of the experiment you may see that the question matches")
    runs = MatchSerializer(many=True, help_text="The first 500 of them, oldest first")

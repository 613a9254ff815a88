"""A saved question's input and output, one serializer for the page's form and the API: a search is
checked as the search checks it (its query parsed, its filters through SearchParams), a failure
filter needs its signature."""

from __future__ import annotations

from rest_framework import serializers

from leaderboard.analysis.stats import resolve_split
from leaderboard.models import INT32_MAX, Split
from leaderboard.questions.models import RunSummary, SavedQuestion
from leaderboard.questions.summaries import reply_html
from leaderboard.search.params import SearchParams
from leaderboard.search.query import MAX_QUERY, QueryError, parse
from leaderboard.search.service import Filters

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
        taken = SavedQuestion.objects.filter(owner=owner, name=name)
        if self.instance is not None:
            taken = taken.exclude(pk=self.instance.pk)
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


class SelectionParams(SearchParams):
    """What to summarise: one of a search (`q` and the search's filters), a failure signature or a
    saved question (each within the run filters: competition, split, agent, model, experiment, ...)."""

    q = serializers.CharField(required=False, default="", max_length=MAX_QUERY, help_text="A search query")
    signature = serializers.CharField(
        required=False, default="", max_length=200, help_text="A failure signature, or a prefix of one ending in *"
    )
    question = serializers.IntegerField(
        required=False, default=None, min_value=1, max_value=INT32_MAX, help_text="A saved question's id"
    )
    cursor = None

    def validate(self, data: dict) -> dict:
        if sum(bool(data.get(k)) for k in ("q", "signature", "question")) != 1:
            raise serializers.ValidationError("give one of q (a search), signature or question (a saved question's id)")
        if data["q"]:
            try:
                parse(data["q"])
            except QueryError as exc:
                raise serializers.ValidationError({"q": [str(exc)]}) from exc
        return data

    def question_for(self, user) -> SavedQuestion:
        """The question the selection asks: a saved one the user may see, or one made for this request."""
        data = self.validated_data
        if data["question"]:
            found = SavedQuestion.objects.visible_to(user).filter(pk=data["question"]).first()
            if found is None:
                raise serializers.ValidationError({"question": ["no such question"]})
            return found
        if data["signature"].strip():
            return SavedQuestion(kind=SavedQuestion.Kind.FAILURE, signature=data["signature"].strip())
        return SavedQuestion(
            kind=SavedQuestion.Kind.SEARCH, query=data["q"], filters={"kind": data["kind"]} if data["kind"] else {}
        )

    def filters(self) -> Filters:
        return Filters(**{k: v for k, v in self.validated_data.items() if k in FILTER_NAMES})


class SummarySerializer(serializers.ModelSerializer):
    reply_html = serializers.SerializerMethodField(
        help_text="The reply, HTML-escaped, its citations of steps it was shown as links (others as plain text)"
    )

    class Meta:
        model = RunSummary
        fields = [
            "id",
            "selection",
            "runs",
            "steps",
            "model",
            "reply",
            "reply_html",
            "tokens_in",
            "tokens_out",
            "cost_usd",
            "created_at",
        ]

    def get_reply_html(self, summary: RunSummary) -> str:
        return str(reply_html(summary, self.context["request"].user))

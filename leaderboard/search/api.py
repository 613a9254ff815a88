"""GET /api/search/: hits across every run the caller may see, grouped by run, paged by cursor."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.search.params import SearchParams
from leaderboard.search.query import QueryError
from leaderboard.search.service import search


class HitSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="The step's index in its run")
    kind = serializers.CharField()
    url = serializers.CharField(help_text="The step's permalink")
    snippet = serializers.CharField(help_text="The text around the first match")
    snippet_html = serializers.CharField(help_text="The same, HTML-escaped, matches in <mark>")


class RunHitsSerializer(serializers.Serializer):
    run = serializers.IntegerField(source="run.pk")
    competition = serializers.CharField(source="run.competition.slug", default=None)
    agent = serializers.CharField(source="run.experiment.agent.name")
    model = serializers.CharField(source="run.experiment.model.name")
    experiment = serializers.IntegerField(source="run.experiment_id")
    url = serializers.SerializerMethodField()
    hits = HitSerializer(many=True)

    def get_url(self, group) -> str:
        return f"/runs/{group.run.pk}/"


class SearchPageSerializer(serializers.Serializer):
    results = RunHitsSerializer(many=True, source="groups")
    next_cursor = serializers.CharField(allow_null=True, help_text="Pass as `cursor` for more; null at the end")
    rows_read = serializers.IntegerField(help_text="Candidate steps the engine gave and this page checked")


class SearchView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(parameters=[SearchParams], responses=SearchPageSerializer)
    def get(self, request):
        params = SearchParams(data=request.query_params)
        params.is_valid(raise_exception=True)
        try:
            page = search(user=request.user, query=params.validated_data["q"], filters=params.filters(),
                          cursor=params.validated_data["cursor"])
        except QueryError as exc:
            raise ValidationError({"q": [str(exc)]}) from exc
        return Response(SearchPageSerializer(page).data)

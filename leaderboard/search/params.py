"""The search's input, one serializer for the page and the API: bounded, and every choice checked."""

from __future__ import annotations

from rest_framework import serializers

from leaderboard.models import INT32_MAX, Run, StepKind
from leaderboard.search.query import MAX_QUERY
from leaderboard.search.service import MEDALS, Filters

MEDAL_CHOICES = [*MEDALS, "none"]


class SearchParams(serializers.Serializer):
    q = serializers.CharField(max_length=MAX_QUERY, help_text='Words, prefixes (tok*) and "exact text"; '
                              "every term must match (docs/search.md)")
    competition = serializers.CharField(required=False, default="", max_length=100)
    split = serializers.CharField(required=False, default="", max_length=100)
    agent = serializers.CharField(required=False, default="", max_length=200)
    model = serializers.CharField(required=False, default="", max_length=200)
    experiment = serializers.IntegerField(required=False, default=None, min_value=1, max_value=INT32_MAX)
    kind = serializers.ChoiceField(choices=StepKind.values, required=False, default="")
    medal = serializers.ChoiceField(choices=MEDAL_CHOICES, required=False, default="")
    verification = serializers.ChoiceField(choices=Run.Verification.values, required=False, default="")
    cursor = serializers.CharField(required=False, default="", max_length=30,
                                   help_text="next_cursor of the previous page")

    def filters(self) -> Filters:
        data = dict(self.validated_data)
        data.pop("q"), data.pop("cursor")
        return Filters(**data)

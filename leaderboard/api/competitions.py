from django.db.models import Q
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from leaderboard.api.serializers import CompetitionDetailSerializer, CompetitionSerializer
from leaderboard.models import Competition


class CompetitionQuerySerializer(serializers.Serializer):
    split = serializers.CharField(required=False, allow_blank=True, max_length=100,
                                  help_text="Only competitions in this split (low, medium, high, ...)")
    q = serializers.CharField(required=False, allow_blank=True, max_length=200, help_text="Search id and name")


@extend_schema_view(list=extend_schema(parameters=[CompetitionQuerySerializer]))
class CompetitionViewSet(viewsets.ReadOnlyModelViewSet):
    lookup_field = "slug"
    lookup_url_kwarg = "id"
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        competitions = Competition.objects.for_list()
        if self.action != "list":
            return competitions
        query = CompetitionQuerySerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        if split := query.validated_data.get("split"):
            competitions = competitions.filter(splits__slug=split)
        if text := query.validated_data.get("q"):
            competitions = competitions.filter(Q(slug__icontains=text) | Q(name__icontains=text))
        return competitions

    def get_serializer_class(self):
        return CompetitionDetailSerializer if self.action == "retrieve" else CompetitionSerializer

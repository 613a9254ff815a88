from django.db.models import Q
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import viewsets

from leaderboard.api.serializers import CompetitionDetailSerializer, CompetitionSerializer
from leaderboard.models import Competition


@extend_schema_view(
    list=extend_schema(parameters=[
        OpenApiParameter("split", str, description="Only competitions in this split (low, medium, high, ...)"),
        OpenApiParameter("q", str, description="Search id and name"),
    ])
)
class CompetitionViewSet(viewsets.ReadOnlyModelViewSet):
    lookup_field = "slug"
    lookup_url_kwarg = "id"
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        competitions = Competition.objects.for_list()
        if split := self.request.query_params.get("split"):
            competitions = competitions.filter(splits__slug=split)
        if query := self.request.query_params.get("q"):
            competitions = competitions.filter(Q(slug__icontains=query) | Q(name__icontains=query))
        return competitions

    def get_serializer_class(self):
        return CompetitionDetailSerializer if self.action == "retrieve" else CompetitionSerializer

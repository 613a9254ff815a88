"""/api/questions/: saved questions (yours and the public ones), and the runs one matches in an
experiment (`/api/questions/<id>/runs/?experiment=<id>`), always among the runs you may see."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import permissions, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from leaderboard.questions import matching
from leaderboard.questions.models import SavedQuestion
from leaderboard.questions.serializers import MatchesSerializer, QuestionSerializer, ScopeSerializer


class OwnerEdits(permissions.BasePermission):
    """Anyone reads a question they may see; only its owner changes or deletes it."""

    def has_object_permission(self, request, view, obj) -> bool:
        return request.method in permissions.SAFE_METHODS or obj.owner_id == request.user.pk


class QuestionViewSet(viewsets.ModelViewSet):
    serializer_class = QuestionSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly, OwnerEdits]
    lookup_value_regex = r"[0-9]+"

    def get_queryset(self):
        return SavedQuestion.objects.visible_to(self.request.user).select_related("owner").order_by("id")

    def perform_create(self, serializer) -> None:
        serializer.save(owner=self.request.user)

    @extend_schema(parameters=[ScopeSerializer], responses=MatchesSerializer)
    @action(detail=True, methods=["get"])
    def runs(self, request, pk=None):
        """The experiment's runs you may see that the question matches, each linked at its step."""
        question = self.get_object()
        scope = ScopeSerializer(data=request.query_params)
        scope.is_valid(raise_exception=True)
        found = matching.matching_runs(question, matching.scoped_runs(request.user, **scope.validated_data))
        return Response(
            MatchesSerializer(
                {
                    "question": question.pk,
                    **scope.validated_data,
                    "count": len(found),
                    "runs": [{"run": run_id, "url": url} for run_id, _, url in matching.listed(found)],
                }
            ).data
        )

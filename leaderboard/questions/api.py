"""/api/questions/: saved questions (yours and the public ones), and the runs one matches in an
experiment (`/api/questions/<id>/runs/?experiment=<id>`), always among the runs you may see."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from leaderboard.questions import matching, summaries
from leaderboard.questions.models import RunSummary, SavedQuestion
from leaderboard.questions.serializers import (
    MatchesSerializer,
    QuestionSerializer,
    ScopeSerializer,
    SelectionParams,
    SummarySerializer,
)


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


class SummaryViewSet(
    mixins.CreateModelMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Your LLM summaries: ask for one of a selection (POST), read them back (GET)."""

    serializer_class = SummarySerializer
    permission_classes = [permissions.IsAuthenticated]
    lookup_value_regex = r"[0-9]+"

    def get_queryset(self):
        return RunSummary.objects.filter(owner=self.request.user)

    @extend_schema(request=SelectionParams, responses={201: SummarySerializer})
    def create(self, request, *args, **kwargs):
        """Summarise what the selected runs did wrong (the newest MEDALBOARD_SUMMARY_MAX_RUNS you may see):
        409 when no model is configured, 429 past MEDALBOARD_SUMMARY_PER_HOUR, 502 when the model failed."""
        params = SelectionParams(data=request.data)
        params.is_valid(raise_exception=True)
        selection = summaries.select(
            user=request.user, question=params.question_for(request.user), filters=params.filters()
        )
        try:
            summary = summaries.summarise(user=request.user, selection=selection)
        except summaries.SummaryRefused as exc:
            return Response({"detail": str(exc)}, status=exc.status)
        return Response(self.get_serializer(summary).data, status=201)

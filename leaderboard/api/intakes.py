"""Where an upload stands: `GET /api/intakes/<id>/` (its uploader and staff only) while a worker
imports it (leaderboard.runs.intake), then the run it became or why it failed."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.models import RunIntake


class IntakeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=RunIntake.Status.choices,
                                     help_text="received -> importing -> imported | failed")
    progress = serializers.CharField(help_text="Where it stands, in words: retries and the reason of a failure")
    done = serializers.BooleanField()
    failure = serializers.ChoiceField(choices=RunIntake.Failure.choices, help_text="Why it failed ('' unless failed)")
    error = serializers.CharField(help_text="The reason of a failure, as the synchronous answer would give it")
    note = serializers.CharField(help_text="e.g. identical to an earlier run, which was returned")
    attempts = serializers.IntegerField()
    run = serializers.IntegerField(source="run_id", allow_null=True, help_text="The run, once imported")
    run_url = serializers.SerializerMethodField(help_text="GET /api/runs/<id>/ of the run, once imported")
    status_url = serializers.SerializerMethodField()
    progress_url = serializers.SerializerMethodField(help_text="The page that follows the upload")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_run_url(self, intake: RunIntake) -> str | None:
        return f"{reverse('run-list')}{intake.run_id}/" if intake.run_id else None

    def get_status_url(self, intake: RunIntake) -> str:
        return reverse("api-intake", args=[intake.pk])

    def get_progress_url(self, intake: RunIntake) -> str:
        return reverse("intake-progress", args=[intake.pk])


class IntakeView(APIView):
    """An upload you sent: received, importing, imported (with its run) or failed (with the reason)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=IntakeSerializer)
    def get(self, request, pk: int):
        return Response(IntakeSerializer(visible_intake(request.user, pk)).data)


def visible_intake(user, pk: int) -> RunIntake:
    """The intake if it is this user's (or the user is staff); a 404 otherwise, whoever's it is."""
    intakes = RunIntake.objects.all() if user.is_staff else RunIntake.objects.filter(owner=user)
    return get_object_or_404(intakes, pk=pk)

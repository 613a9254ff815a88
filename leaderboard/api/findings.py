"""Findings in the API: `findings` on a run's detail, and staff decisions on one
(`POST /api/findings/<id>/review/` with `status` and `reason`)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.models import Run
from leaderboard.trust.decisions import MAX_REASON, DecisionError, decide
from leaderboard.trust.models import Finding
from leaderboard.trust.titles import check_title


class FindingSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    check = serializers.CharField(source="check_name", help_text="The check's name, e.g. forbidden-paths")
    title = serializers.SerializerMethodField(help_text="The check's title for people")
    severity = serializers.ChoiceField(choices=Finding.Severity.choices)
    summary = serializers.CharField()
    steps = serializers.ListField(child=serializers.IntegerField(), help_text="Indexes of the steps that "
                                  "triggered it; /runs/<run>/#step-<index> is each one's permalink")
    evidence = serializers.JSONField(help_text="What the check saw: short quotes (keys masked), counts; never answers")
    status = serializers.ChoiceField(choices=Finding.Status.choices)
    review_reason = serializers.CharField()
    reviewed_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()

    def get_title(self, finding: Finding) -> str:
        return check_title(finding.check_name)


def findings_of(run: Run) -> list[dict]:
    """The run's findings as the API shows them (one query)."""
    return FindingSerializer(run.findings.all(), many=True).data


class DecisionInputSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Finding.Status.choices)
    reason = serializers.CharField(max_length=MAX_REASON)


class FindingReviewView(APIView):
    """Staff confirm, dismiss or reopen a finding, with a reason (kept, and audited)."""

    permission_classes = [IsAdminUser]

    @extend_schema(request=DecisionInputSerializer, responses={200: FindingSerializer})
    def post(self, request, pk: int):
        data = DecisionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            finding = decide(finding=pk, user=request.user, **data.validated_data)
        except Finding.DoesNotExist:
            return Response({"detail": "no such finding"}, status=status.HTTP_404_NOT_FOUND)
        except DecisionError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(FindingSerializer(finding).data)

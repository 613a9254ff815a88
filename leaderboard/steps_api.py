"""Read-only trajectory API: a run's steps, paged, filtered and searched; and its outline.

The outline (tree nodes and score points) is separate from the steps so the replay page can draw
its tree and chart without downloading the whole trajectory.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet, TextField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.models import Step
from leaderboard.replay import page_containing, parse_kinds, steps_of, visible_run

DEFAULT_PAGE_SIZE = 200
MAX_PAGE_SIZE = 1000
OUTLINE_LIMIT = 5000


class StepSerializer(serializers.ModelSerializer):
    class Meta:
        model = Step
        fields = ["index", "parent_index", "kind", "t", "title", "text", "data", "score"]
        read_only_fields = fields


class StepPageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Steps matching the filters")
    page = serializers.IntegerField(help_text="0-based page number")
    page_size = serializers.IntegerField()
    num_pages = serializers.IntegerField()
    results = StepSerializer(many=True)


class StepQuerySerializer(serializers.Serializer):
    page = serializers.IntegerField(required=False, min_value=0, default=0, help_text="0-based page")
    page_size = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_PAGE_SIZE, default=DEFAULT_PAGE_SIZE
    )
    type = serializers.CharField(required=False, default="", help_text="Step kinds, comma-separated")
    q = serializers.CharField(required=False, default="", help_text="Case-insensitive text search")
    around = serializers.IntegerField(
        required=False, min_value=0, help_text="Return the page holding this step index (overrides page)"
    )


def search(steps: QuerySet[Step], query: str) -> QuerySet[Step]:
    """Match title, text and every string inside data (code, stdout, stderr...)."""
    if not query:
        return steps
    steps = steps.annotate(data_text=Cast("data", TextField()))
    return steps.filter(Q(title__icontains=query) | Q(text__icontains=query) | Q(data_text__icontains=query))


@extend_schema(
    parameters=[StepQuerySerializer],
    responses=StepPageSerializer,
    description="A run's trajectory, in pages. Private runs of other users are 404.",
)
class RunStepsView(APIView):
    permission_classes = [AllowAny]

    def get(self, request, pk: int) -> Response:
        params = StepQuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        p = params.validated_data
        run = visible_run(request, pk)
        steps = search(steps_of(run, parse_kinds(p["type"])), p["q"].strip())
        page = p["page"] if p.get("around") is None else page_containing(steps, p["around"], p["page_size"])
        return Response(StepPageSerializer(_page(steps, page, p["page_size"])).data)


def _page(steps: QuerySet[Step], page: int, size: int) -> dict:
    count = steps.count()
    return {
        "count": count, "page": page, "page_size": size, "num_pages": -(-count // size),
        "results": list(steps[page * size:(page + 1) * size]),
    }


class TreeNodeSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    parent_index = serializers.IntegerField(allow_null=True)
    kind = serializers.CharField()
    title = serializers.CharField()
    score = serializers.FloatField(allow_null=True)
    buggy = serializers.BooleanField()
    is_best = serializers.BooleanField()


class ScorePointSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    t = serializers.FloatField(allow_null=True)
    score = serializers.FloatField()


class OutlineSerializer(serializers.Serializer):
    tree = TreeNodeSerializer(many=True)
    scores = ScorePointSerializer(many=True)
    truncated = serializers.BooleanField(help_text=f"More than {OUTLINE_LIMIT} nodes or points")


def _flag(value) -> bool:
    # Key transforms come back as 1/0 on SQLite and as "true"/"false" text elsewhere.
    return value in (True, 1, "1", "true", "True")


def tree_nodes(steps: QuerySet[Step]) -> list[dict]:
    """Tree-search nodes: steps with a parent, and the steps they point at (the roots)."""
    parents = steps.exclude(parent_index=None).values("parent_index")
    nodes = steps.filter(Q(parent_index__isnull=False) | Q(index__in=parents)).values(
        "index", "parent_index", "kind", "title", "score", buggy=KT("data__buggy"), is_best=KT("data__is_best")
    )[:OUTLINE_LIMIT + 1]
    return [{**n, "buggy": _flag(n["buggy"]), "is_best": _flag(n["is_best"])} for n in nodes]


@extend_schema(responses=OutlineSerializer, description="Tree-search nodes and score points of a run.")
class RunOutlineView(APIView):
    permission_classes = [AllowAny]

    def get(self, request, pk: int) -> Response:
        steps = steps_of(visible_run(request, pk))
        tree = tree_nodes(steps)
        scores = list(steps.exclude(score=None).values("index", "t", "score")[:OUTLINE_LIMIT + 1])
        truncated = len(tree) > OUTLINE_LIMIT or len(scores) > OUTLINE_LIMIT
        data = {"tree": tree[:OUTLINE_LIMIT], "scores": scores[:OUTLINE_LIMIT], "truncated": truncated}
        return Response(OutlineSerializer(data).data)

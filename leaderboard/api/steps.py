"""Read-only trajectory API: a run's steps, paged, filtered and searched; and its outline.

The outline (tree nodes and score points) is separate from the steps so the replay page can draw
its tree and chart without downloading the whole trajectory.
"""

from __future__ import annotations

from itertools import islice

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.models import INT32_MAX
from leaderboard.trajectories.store import OUTLINE_LIMIT, StoredTrajectory, outline_of
from leaderboard.web.visibility import parse_kinds, visible_run

DEFAULT_PAGE_SIZE = 200
MAX_PAGE_SIZE = 1000
# Bytes of trajectory one search request reads at most. A search that has not filled its page by
# then answers with the hits so far and a cursor to go on from, so no request scans a whole 1 GB file.
SEARCH_BUDGET = 32 << 20


class StepSerializer(serializers.Serializer):
    """One step of the event model (docs/trajectory-format.md)."""

    index = serializers.IntegerField()
    parent_index = serializers.IntegerField(allow_null=True)
    kind = serializers.CharField()
    t = serializers.FloatField(allow_null=True, help_text="Seconds since the run started")
    title = serializers.CharField(allow_blank=True)
    text = serializers.CharField(allow_blank=True)
    data = serializers.DictField()
    score = serializers.FloatField(allow_null=True)


class StepPageSerializer(serializers.Serializer):
    count = serializers.IntegerField(allow_null=True, help_text="Steps matching the filters; null for a search "
                                     "(it does not count every hit: follow next_cursor)")
    page = serializers.IntegerField(help_text="0-based page number")
    page_size = serializers.IntegerField()
    num_pages = serializers.IntegerField(allow_null=True, help_text="null for a search")
    next_cursor = serializers.IntegerField(
        allow_null=True, help_text="Search: pass as `cursor` for the hits that follow; null when there are none")
    more = serializers.BooleanField(help_text="Whether more steps or hits follow this page")
    results = StepSerializer(many=True)


class StepQuerySerializer(serializers.Serializer):
    page = serializers.IntegerField(required=False, min_value=0, max_value=INT32_MAX, default=0,
                                    help_text="0-based page")
    page_size = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_PAGE_SIZE, default=DEFAULT_PAGE_SIZE
    )
    type = serializers.CharField(required=False, default="", max_length=1000, help_text="Step kinds, comma-separated")
    q = serializers.CharField(required=False, default="", max_length=1000,
                              help_text="Case-insensitive text search, paged by cursor: the first page_size hits "
                                        "from `cursor` on")
    cursor = serializers.IntegerField(required=False, min_value=0, max_value=INT32_MAX,
                                      help_text="With q: search from this step index (a previous response's "
                                                "next_cursor)")
    around = serializers.IntegerField(
        required=False, min_value=0, max_value=INT32_MAX,
        help_text="Return the page holding this step index (overrides page); with q, the hits from this step on"
    )

    def validate(self, attrs: dict) -> dict:
        searching = bool(attrs["q"].strip())
        if searching and attrs["page"]:
            raise serializers.ValidationError({"page": "a search pages by cursor: pass next_cursor as cursor"})
        if not searching and "cursor" in attrs:
            raise serializers.ValidationError({"cursor": "cursor pages a search: it needs q"})
        return attrs


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
        return Response(StepPageSerializer(StoredTrajectory.read(visible_run(request, pk),
                                                                 lambda stored: _steps_page(stored, p))).data)


def _steps_page(stored: StoredTrajectory, p: dict) -> dict:
    kinds, query, size = parse_kinds(p["type"]), p["q"].strip(), p["page_size"]
    if query:
        return _search_page(stored, kinds, query, p, size)
    count = stored.count(kinds)
    page = p["page"] if p.get("around") is None else stored.count_before(p["around"], kinds) // size
    return _page_info(count, page, size, stored.complete(stored.slice(page * size, size, kinds)))


def _search_page(stored: StoredTrajectory, kinds: list[str] | None, query: str, p: dict, size: int) -> dict:
    """The first `size` hits from the cursor (or `around`) on, and where the next ones start: one
    read of the blocks the search index names, stopping at the page's end or SEARCH_BUDGET bytes.
    One hit more than the page says whether more follow; nothing counts them all."""
    start = p["cursor"] if p.get("cursor") is not None else p.get("around") or 0
    search = stored.search(query, kinds, start, budget=SEARCH_BUDGET)
    hits = list(islice(search, size + 1))
    next_cursor = hits[size].index if len(hits) > size else search.resume_at
    return {"count": None, "page": 0, "page_size": size, "num_pages": None, "next_cursor": next_cursor,
            "more": next_cursor is not None, "results": stored.complete(hits[:size])}


def _page_info(count: int, page: int, size: int, results: list) -> dict:
    num_pages = -(-count // size)
    return {"count": count, "page": page, "page_size": size, "num_pages": num_pages, "next_cursor": None,
            "more": page + 1 < num_pages, "results": results}


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


@extend_schema(responses=OutlineSerializer, description="Tree-search nodes and score points of a run.")
class RunOutlineView(APIView):
    permission_classes = [AllowAny]

    def get(self, request, pk: int) -> Response:
        # Built by the trajectory store in exactly this shape; running 10,000 items through the
        # serializer only to copy them took most of this response's time.
        return Response(outline_payload(visible_run(request, pk)))


def outline_payload(run) -> dict:
    """The outline endpoint's body (also embedded in a static export of the replay)."""
    outline = outline_of(run)
    return {"tree": outline.get("tree", []), "scores": [{"index": i, "t": t, "score": v}
            for i, t, v in outline.get("scores", [])], "truncated": outline.get("truncated", False)}

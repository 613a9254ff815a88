"""Paging for long lists: keyset (cursor) pages whose cost does not grow with the offset.

`/api/runs/` at 100,000 runs: an OFFSET page reads and throws away every row before it, and a
COUNT(*) on every page reads them all. A cursor page seeks on the (created_at, id) index instead, and
the total is an estimate, counted once per filter and cached for a minute.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response

COUNT_CACHE_S = 60


class RunCursorPagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 100
    page_size_query_param = "limit"
    max_page_size = 1000

    def paginate_queryset(self, queryset, request, view=None):
        self._count_queryset = queryset
        return super().paginate_queryset(queryset, request, view)

    def approximate_count(self) -> int:
        """The number of matching runs, counted at most once a minute per query (it may lag new runs)."""
        key = "runs-count:" + hashlib.sha256(str(self._count_queryset.query).encode()).hexdigest()
        count = cache.get(key)
        if count is None:
            count = self._count_queryset.count()
            cache.set(key, count, COUNT_CACHE_S)
        return count

    def get_paginated_response(self, data):
        return Response({
            "count": self.approximate_count(), "next": self.get_next_link(),
            "previous": self.get_previous_link(), "results": data,
        })

    def get_paginated_response_schema(self, schema):
        response = super().get_paginated_response_schema(schema)
        response["properties"]["count"] = {"type": "integer", "description": "Matching runs, cached up to a minute"}
        return response

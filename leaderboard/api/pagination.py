"""Paging for long lists: keyset (cursor) pages whose cost does not grow with the offset.

`/api/runs/` at 100,000 runs: an OFFSET page reads and throws away every row before it, and a
COUNT(*) on every page reads them all. A cursor page seeks on the (created_at, id) index instead, and
the total is an estimate, counted once per filter and cached for a minute.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination, LimitOffsetPagination
from rest_framework.response import Response

COUNT_CACHE_S = 60
MAX_OFFSET = 10**9  # far past any list here, and far inside the database's 64-bit OFFSET


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """limit/offset paging whose parameters are whole numbers in range, or a 400 that says so
    (DRF's own passes an offset past 64 bits to the database, which fails the query)."""

    max_limit = 1000

    def get_limit(self, request) -> int:
        return _query_int(request, self.limit_query_param, self.default_limit, 1, self.max_limit, clamp=True)

    def get_offset(self, request) -> int:
        return _query_int(request, self.offset_query_param, 0, 0, MAX_OFFSET)


def _query_int(request, name: str, default: int, low: int, high: int, *, clamp: bool = False) -> int:
    """A whole-number query parameter in [low, high]: out of range it is clamped or a 400."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    if not (raw.isascii() and raw.isdigit()):
        raise ValidationError({name: [f"must be a whole number from {low} to {high}"]})
    value = int(raw) if len(raw) <= 20 else high + 1  # int() of thousands of digits is itself an error
    if clamp:
        return max(low, min(value, high))
    if not low <= value <= high:
        raise ValidationError({name: [f"must be a whole number from {low} to {high}"]})
    return value


class RunCursorPagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 100
    page_size_query_param = "limit"
    max_page_size = 1000

    def paginate_queryset(self, queryset, request, view=None):
        self._count_queryset = queryset
        try:
            return super().paginate_queryset(queryset, request, view)
        except (DjangoValidationError, ValueError, OverflowError):
            # A cursor decodes to a position that is no timestamp (crafted, or from another list).
            raise NotFound(self.invalid_cursor_message) from None

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

"""The API's JSON parser: bounded in nesting depth and number range.

DRF's own parser lets `1e999` through as infinity (which later breaks
`int()` in a worker), and turns JSON nested a few thousand levels deep into a RecursionError (a 500).
No field of this API needs either: both are refused here, with the reason, as a 400.
"""

from __future__ import annotations

import json
import math

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 32
INT64_MAX = 2**63 - 1


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range (not a finite double)")
    return value


def _int64(text: str) -> int:
    value = int(text)
    if abs(value) > INT64_MAX:
        raise ValueError(f"the integer {text[:40]}... is out of range (beyond 64 bits)")
    return value


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH):
    """json.loads that refuses what the API never takes: NaN/Infinity, numbers out of range, nesting
    deeper than max_depth. ValueError says which."""
    try:
        value = json.loads(text, parse_float=_finite_float, parse_int=_int64, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    check_depth(value, max_depth)
    return value


def check_depth(value, max_depth: int = MAX_DEPTH) -> None:
    """Raise ValueError if lists/objects nest deeper than max_depth (iteratively: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > max_depth:
                raise ValueError(f"nested deeper than {max_depth} levels")
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        # DRF hands this parser request.body, which Django has already held to DATA_UPLOAD_MAX_MEMORY_SIZE.
        try:
            return loads(stream.read().decode(self._encoding(parser_context)))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None

    def _encoding(self, parser_context) -> str:
        return (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)

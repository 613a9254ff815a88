"""Request guards that apply to every URL: refused early, with a reason, before any view runs.

- A NUL byte in the path or the query string is a 400: no page needs one, and PostgreSQL refuses
  them in text (a 500 deep inside a query otherwise).
- A body larger than the upload limit is a 413 judged from Content-Length, before it is read.
And every response carries the Content-Security-Policy (settings.CONTENT_SECURITY_POLICY).
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse


def _refusal(status: int, reason: str, request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/"):
        from django.http import JsonResponse

        return JsonResponse({"detail": reason}, status=status)
    return HttpResponse(reason, status=status, content_type="text/plain; charset=utf-8")


def _has_nul(request: HttpRequest) -> bool:
    if "\x00" in request.path:
        return True
    return any("\x00" in key or any("\x00" in v for v in values) for key, values in request.GET.lists())


class ContentSecurityPolicyMiddleware:
    """Every response gets the site's Content-Security-Policy unless it set its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.CONTENT_SECURITY_POLICY:
            response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


class RequestGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _has_nul(request):
            return _refusal(400, "a NUL byte is not allowed in a URL or its parameters", request)
        limit = body_limit()
        length = request.META.get("CONTENT_LENGTH") or "0"
        if not (length.isascii() and length.isdigit()):  # "²" is a digit to isdigit(), not to int()
            return _refusal(400, "Content-Length must be a whole number of bytes", request)
        if int(length) > limit:
            return _refusal(413, f"the request body is {int(length):,} bytes; the limit is {limit:,} bytes", request)
        return self.get_response(request)


def body_limit() -> int:
    """The largest request body: the upload limit plus room for the form's other fields."""
    return settings.MAX_UPLOAD_BYTES + (1 << 20)

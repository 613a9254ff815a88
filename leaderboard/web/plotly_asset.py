"""Plotly's 4.8 MB plotly.min.js, served gzip-compressed (about 1.4 MB) with a year of caching.

The file comes from the installed plotly package and its URL carries the package's version, so a
browser may keep it for good: a new plotly is a new URL. It is compressed once per process, the
same way under DEBUG, in tests and in production (static-file finders serve it uncompressed and
uncached, and a compressed copy made at collectstatic would exist only in production). Pages load
it only where a chart is drawn: `{% plotly_script %}` in a template's scripts block.
"""

from __future__ import annotations

import gzip
import hashlib
from functools import lru_cache
from importlib.metadata import version as installed_version
from importlib.util import find_spec
from pathlib import Path

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified
from django.urls import reverse
from django.views.decorators.http import require_safe

# Found, not imported: importing plotly costs a fifth of a second that the URL configuration (so
# every management command) would pay.
SOURCE = Path(find_spec("plotly").origin).parent / "package_data" / "plotly.min.js"
VERSION = installed_version("plotly")
MAX_AGE = 365 * 24 * 3600


@lru_cache(maxsize=1)
def _bundle() -> tuple[bytes, bytes, str]:
    raw = SOURCE.read_bytes()
    return raw, gzip.compress(raw, compresslevel=9, mtime=0), hashlib.sha256(raw).hexdigest()[:16]


def url() -> str:
    return reverse("plotly-js", args=[VERSION])


@require_safe
def plotly_js(request: HttpRequest, version: str) -> HttpResponse:
    if version != VERSION:
        raise Http404("no such plotly version here")
    raw, compressed, digest = _bundle()
    etag = f'"{digest}"'
    if request.headers.get("If-None-Match") == etag:
        return HttpResponseNotModified()
    gzip_ok = "gzip" in request.headers.get("Accept-Encoding", "")
    response = HttpResponse(compressed if gzip_ok else raw, content_type="text/javascript; charset=utf-8")
    if gzip_ok:
        response["Content-Encoding"] = "gzip"
    response["Vary"] = "Accept-Encoding"
    response["Cache-Control"] = f"public, max-age={MAX_AGE}, immutable"
    response["ETag"] = etag
    return response

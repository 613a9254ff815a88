"""Pages saved as ONE self-contained HTML file: for sharing and for attaching to papers.

`?export=html` on the leaderboard, an experiment page, a scaling chart and a run's replay renders the
page as usual with `exported` set (filters that need the server are left out, data stays embedded as
JSON), then every local stylesheet and script (plotly.min.js included) is inlined, and anything else
that would load from a server is dropped, so the file opens from file:// with no network. Links stay
links to the site (a <base> element points them at it)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone

_SCRIPT = re.compile(r'<script\b[^>]*\bsrc="(?P<url>[^"]*)"[^>]*>\s*</script>', re.IGNORECASE)
_STYLESHEET = re.compile(r'<link\b[^>]*\brel="stylesheet"[^>]*\bhref="(?P<url>[^"]*)"[^>]*>', re.IGNORECASE)
_IMAGE = re.compile(r'<img\b[^>]*\bsrc="(?!data:)[^"]*"[^>]*>', re.IGNORECASE)
_HEAD = re.compile(r"<head>", re.IGNORECASE)


def render_or_export(request: HttpRequest, template: str, context: dict, filename: str) -> HttpResponse:
    """The page, or with `?export=html` its self-contained file."""
    if request.GET.get("export") == "html":
        return export_page(request, template, context, filename)
    return render(request, template, context)


def export_page(request: HttpRequest, template: str, context: dict, filename: str) -> HttpResponse:
    """The page as a download: one HTML file with its styles, scripts and data inside."""
    context = {**context, "exported": True, "exported_at": timezone.now()}
    html = render_to_string(template, context, request=request)
    response = HttpResponse(self_contained(html, base=request.build_absolute_uri("/")),
                            content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def self_contained(html: str, *, base: str) -> str:
    html = _SCRIPT.sub(lambda m: _inline("script", m.group("url")), html)
    html = _STYLESHEET.sub(lambda m: _inline("style", m.group("url")), html)
    html = _IMAGE.sub("", html)  # an image from a server would be a network request
    note = (f'<base href="{base}" target="_blank"><meta name="generator" content="Medalboard static export">')
    return _HEAD.sub(lambda _: "<head>" + note, html, count=1)


def _inline(tag: str, url: str) -> str:
    content = _static_text(url)
    if content is None:
        return ""  # not one of our files: left out rather than fetched
    # A closing tag inside the text would end the element early.
    content = re.sub(rf"</(?={tag})", r"<\\/", content, flags=re.IGNORECASE)
    return f"<{tag}>{content}</{tag}>"


@lru_cache(maxsize=32)
def _static_text(url: str) -> str | None:
    from leaderboard.web import plotly_asset

    if url == plotly_asset.url():  # served compressed from its own URL, not from static
        return plotly_asset.SOURCE.read_text(encoding="utf-8")
    prefix = "/" + settings.STATIC_URL.lstrip("/")
    if not url.startswith(prefix):
        return None
    relative = url[len(prefix):].split("?", 1)[0]
    found = finders.find(relative)
    path = Path(found) if found else Path(settings.STATIC_ROOT) / relative
    return path.read_text(encoding="utf-8") if path.is_file() else None

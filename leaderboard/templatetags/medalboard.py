import html
import re
from decimal import ROUND_HALF_UP, Context, Decimal
from urllib.parse import urlsplit

import markdown as markdown_lib
import nh3
from django import template
from django.template.defaultfilters import floatformat
from django.utils.formats import localize
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe

register = template.Library()

# Competition descriptions come from third-party Markdown: render it, then keep only harmless HTML.
_ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "div", "dl", "dt", "em", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "i", "img", "li", "ol", "p", "pre", "span", "strong", "sub", "sup", "table",
    "tbody", "td", "th", "thead", "tr", "ul",
}


@register.filter
def render_markdown(text: str) -> str:
    rendered = markdown_lib.markdown(text or "", extensions=["tables", "fenced_code", "sane_lists"])
    clean = nh3.clean(rendered, tags=_ALLOWED_TAGS, url_schemes={"http", "https", "mailto"})
    return mark_safe(_IMG.sub(_image_link, clean))


# nh3's output quotes every attribute with " and escapes the values, so these patterns are exact.
_IMG = re.compile(r"<img\b[^>]*>")
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')
_EMBEDDED_URL = re.compile(r"https?://[^\s\"'<>]+")


def _image_link(match: re.Match) -> str:
    """An image on another host becomes a link to it: a reader's browser contacts that host only
    when the reader asks. Images at a path of this site (/static/...) stay images. A relative source
    (`images/a.png`, or a typo such as `!https://host/a.png`) would be asked of this site beside the
    competition's page, which has no such file (a 404 in the reader's console): it becomes a link to
    the address it holds, or else the image's name in words."""
    attributes = {name: html.unescape(value) for name, value in _ATTRIBUTE.findall(match.group(0))}
    src = attributes.get("src", "")
    label = attributes.get("alt") or attributes.get("title") or "image"
    if not urlsplit(src).hostname:
        if src.startswith("/") and not src.startswith("//"):
            return match.group(0)
        embedded = _EMBEDDED_URL.search(src)
        if not embedded:
            return format_html('<span class="missing-image">[{}: image not included]</span>', label)
        src = embedded.group(0)
    host = urlsplit(src).hostname
    return format_html('<a class="external-image" href="{}" rel="noopener noreferrer nofollow" target="_blank" '
                       'title="opens {}">[{}: load image from {}]</a>', src, src, label, host)


@register.simple_tag
def plotly_script() -> str:
    """Plotly, compressed and cached for a year (leaderboard.web.plotly_asset); only on pages with a chart."""
    from leaderboard.web import plotly_asset

    return format_html('<script src="{}"></script>', plotly_asset.url())


@register.filter
def duration_hours(value) -> str:
    """A time in hours for people: `2 min`, `1 h 30 min` (leaderboard.lib.durations); a number written as
    text (published results' "24") too."""
    from leaderboard.lib.durations import format_hours

    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            value = None
    return format_hours(_number(value))


@register.filter
def duration_seconds(value) -> str:
    """A time in seconds for people: `45 s`, `1 h 30 min` (leaderboard.lib.durations)."""
    from leaderboard.lib.durations import format_seconds

    return format_seconds(_number(value))


def _number(value) -> float | None:
    """A number a duration can be made of; None (shown as unknown) for anything else, booleans included."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


@register.filter
def count_short(value) -> str:
    """A large count in few characters: 950, 12.3 k, 222 M (the exact number stays in the cell's data-value)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
        return "–"
    for size, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= size:
            scaled = value / size
            return (f"{scaled:.1f}" if abs(scaled) < 9.95 else f"{scaled:.0f}") + suffix
    return f"{value:.0f}"


@register.filter
def percent_change(value) -> str:
    """A relative change (0.125) as a signed percentage: +12.5%, -3.0%."""
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
        return "–"
    return f"{100 * value:+.1f}%"


@register.filter
def score(value, digits: int = 5) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


@register.filter
def decimals(value, places: int = 2) -> str:
    """What `floatformat:<places>` (places >= 0) prints for a number or None, about ten times faster:
    the leaderboard prints ~1,000 of them per page and floatformat's generic path was a fifth of its
    rendering. The decimal text is rounded half up, as floatformat does; no thousands separator
    (USE_THOUSAND_SEPARATOR is off). Anything else (text, NaN, below 1e-12 or beyond 1e15) goes to floatformat."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (value == 0 or 1e-12 < abs(value) < 1e15):
        return floatformat(value, places)  # also NaN and infinities; floatformat has quirks of its own far out
    rounded = Decimal(str(value)).quantize(Decimal(1).scaleb(-int(places)), ROUND_HALF_UP, _WIDE)
    return f"{rounded.copy_abs() if not rounded else rounded:f}"


_WIDE = Context(prec=400)  # enough digits for any float's decimal text, as floatformat ensures


@register.simple_tag
def metric_cells(row: dict) -> str:
    """A leaderboard row's metric cells (mean ± SEM over seeds), the markup the template wrote for them,
    built here: the ~400 cells of a page took a third of the page's time through the template engine."""
    return mark_safe("".join(f"\n      {_metric_cell(value, sem, row['n_seeds'])}\n      "
                             for _, value, sem in row["cells"]))


def _metric_cell(value, sem, n_seeds: int) -> str:
    if value is None:
        return '<td class="num" data-value=""><span class="muted">–</span></td>'
    text = decimals(value, 2)
    if sem is not None:
        text += f' <span class="muted small">± {decimals(sem, 2)}</span>'
    elif n_seeds == 1:
        text += (' <span class="muted small" title="the standard error needs at least two seeds">'
                 "1 seed: no error bar</span>")
    return f'<td class="num" data-value="{conditional_escape(localize(value))}">{text}</td>'


@register.filter
def check_title(check_name: str) -> str:
    """A finding's check in words ("Reads paths the agent must not")."""
    from leaderboard.trust.titles import check_title as title  # the checks' registry: loaded on first use

    return title(check_name)

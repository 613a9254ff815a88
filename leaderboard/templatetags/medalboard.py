import markdown as markdown_lib
import nh3
from django import template
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
    html = markdown_lib.markdown(text or "", extensions=["tables", "fenced_code", "sane_lists"])
    return mark_safe(nh3.clean(html, tags=_ALLOWED_TAGS, url_schemes={"http", "https", "mailto"}))


@register.filter
def score(value, digits: int = 5) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)

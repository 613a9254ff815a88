"""The run page's closest matches by code, for templates/leaderboard/trust/_similar.html: the page
includes one template, and the query runs only where that template is shown."""

from django import template

from leaderboard.trust import similarity

register = template.Library()


@register.simple_tag(takes_context=True)
def closest_code(context, run) -> list[similarity.Match]:
    request = context.get("request")
    return similarity.matches_for(run, getattr(request, "user", None))

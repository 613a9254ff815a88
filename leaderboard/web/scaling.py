"""The scaling pages: /scaling/time/, /scaling/pass-at-k/, /scaling/hardware/.

Thin: parse the same query as the JSON endpoints (leaderboard.api.scaling), compute the same payload,
embed it for static/js/scaling.js to draw; `?export=html` saves the page as one self-contained file."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from rest_framework.exceptions import ValidationError
from rest_framework.fields import BooleanField

from leaderboard.analysis import scaling, stats
from leaderboard.api.runs import rows_to_csv
from leaderboard.api.scaling import curve_payload, parse_query
from leaderboard.lib.durations import format_hours
from leaderboard.models import Split
from leaderboard.web import static_export

PAGES = {
    "time": {"title": "Score against time budget", "api": "api-scaling-time",
             "about": "Any-medal % at each time budget: every run is graded by its latest submission snapshot at "
                      "or before the budget (what it would have submitted had it been stopped then). A snapshot not "
                      "graded yet, or whose grading failed, counts as no medal: such points are drawn hollow and the "
                      "table counts their runs. Band: ± SEM over seeds."},
    "pass-at-k": {"title": "pass@k", "api": "api-scaling-pass-at-k",
                  "about": "Share of the split's competitions with a medal in at least one of k seeds (unbiased "
                           "estimator, averaged over competitions). Band: 95% bootstrap interval over competitions, "
                           f"fixed seed {scaling.BOOTSTRAP_SEED}."},
    "hardware": {"title": "Hardware", "api": "api-scaling-hardware",
                 "about": "Experiments that differ only in hardware (same agent, model, time limit and settings), "
                          "any-medal % with ± SEM error bars, ordered by GPU count, then GPU type."},
}
QUERY_KEYS = ("split", "agent", "model", "hardware", "experiment", "pad", "hours")


def scaling_page(request: HttpRequest, kind: str) -> HttpResponse:
    if kind not in PAGES:
        raise Http404("no such scaling chart")
    if request.GET.get("format") in ("csv", "json"):  # the page's numbers are the API's
        return redirect(f"{reverse(PAGES[kind]['api'])}?{request.GET.urlencode()}")
    errors, payload, params, opened_from = {}, None, {}, None
    try:
        params = parse_query(request.GET)
        payload = curve_payload(kind, params, request.user)
        if "split" not in request.GET and not drawable(payload):
            params, payload, opened_from = _opening_split(kind, params, payload, request.user)
    except ValidationError as exc:
        errors = exc.detail
    except Split.DoesNotExist:
        errors = {"split": [f"unknown split {request.GET.get('split')!r}"]}
    given = {k: request.GET.getlist(k) for k in QUERY_KEYS}
    if opened_from is not None:
        given["split"] = [params["split"]]
    query = urlencode([(k, v) for k in QUERY_KEYS for v in given[k] if v])
    api = reverse(PAGES[kind]["api"])
    context = {
        "kind": kind, "page": PAGES[kind], "pages": PAGES, "payload": payload, "errors": errors,
        "opened_from": opened_from, "empty": why_empty(payload), "split_name": _split_name(payload),
        "form": {k: given[k][-1] if given[k] else "" for k in QUERY_KEYS}, "split_choices": stats.split_choices(),
        # the box shows what was applied: pad=on, yes, 1 and true all pad (the API's boolean)
        "pad": params.get("pad", request.GET.get("pad", "").lower() in BooleanField.TRUE_VALUES),
        "api_url": api, "json_url": f"{api}?{query}", "csv_url": f"{api}?{query}{'&' if query else ''}format=csv",
        "csv_rows": scaling.csv_rows(payload) if payload else [],
    }
    context["table_head"], context["table_rows"] = table_for_people(context["csv_rows"])
    if request.GET.get("export") == "html" and payload is not None:
        context["csv_text"] = rows_to_csv(context["csv_rows"])
        return static_export.export_page(request, "leaderboard/scaling.html", context,
                                         f"medalboard-scaling-{kind}-{params['split']}.html")
    return render(request, "leaderboard/scaling.html", context, status=400 if errors else 200)


def _rows(payload: dict) -> list[dict]:
    """The payload's experiments, those of the hardware groups included."""
    return [*payload.get("experiments", []), *(e for g in payload.get("groups", []) for e in g["experiments"])]


def drawable(payload: dict | None) -> bool:
    """Whether the chart has a point: an experiment with a counted seed."""
    return payload is not None and any(row["n_seeds"] for row in _rows(payload))


def why_empty(payload: dict | None) -> dict:
    """What an empty chart lacks, for its message: no experiment at all (`none`), or experiments whose
    seeds are all incomplete (`incomplete`, with how many); {} when there is something to draw.
    static/js/scaling.js says the same after a change of filters."""
    if payload is None or drawable(payload):
        return {}
    rows = _rows(payload)
    return {"state": "incomplete", "n": len(rows)} if rows else {"state": "none"}


def _opening_split(kind: str, params: dict, payload: dict, user) -> tuple[dict, dict, Split | None]:
    """For a visitor who named no split, when the default split has nothing to draw (a fresh site), the
    first split that has (the demo content), as the leaderboard opens: an empty 0-4 % chart says
    nothing about the site. Returns the parameters, payload and the split it stands in for (or None)."""
    default = stats.resolve_split(params["split"])
    for slug, _ in stats.split_choices():
        if stats.SPLIT_ALIASES.get(slug, slug) == default.slug:
            continue
        try:
            candidate = curve_payload(kind, {**params, "split": slug}, user)
        except Split.DoesNotExist:
            continue
        if drawable(candidate):
            return {**params, "split": slug}, candidate, default
    return params, payload, None


def _split_name(payload: dict | None) -> str:
    if payload is None:
        return ""
    return Split.objects.filter(benchmark__slug="mle-bench", slug=payload["split"]).values_list(
        "name", flat=True).first() or payload["split"]


# The page's table of the numbers drawn is the CSV's rows for people: times in hours are written as
# durations (static/js/scaling.js does the same when it rebuilds the table); the CSV keeps the numbers.
PEOPLE_HEADERS = {"time_limit_hours": "time limit", "hours": "time budget"}


def table_for_people(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """(headers, cells): the CSV's columns, hours written as durations, and a point's `hours` left out
    where its `budget` already says the same in words."""
    if not rows:
        return [], []
    keys = [k for k in rows[0] if not (k == "hours" and "budget" in rows[0])]
    cells = [["–" if row.get(k) is None else format_hours(row[k]) if k in PEOPLE_HEADERS else str(row[k])
              for k in keys] for row in rows]
    return [PEOPLE_HEADERS.get(k, k) for k in keys], cells

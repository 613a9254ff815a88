"""Plotly figures, built in Python and drawn in the browser by the locally served plotly.min.js."""

from __future__ import annotations

import html
import math
from collections import Counter
from copy import deepcopy
from functools import lru_cache
from importlib import import_module

from leaderboard.competitions.medals import Thresholds
from leaderboard.lib.durations import axis_unit, format_seconds


class _Imported:
    """A module imported on first use: Plotly takes a second to import, and the URL configuration
    (so every management command) imports this module without drawing a figure."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str):
        return getattr(import_module(self._name), attribute)


go = _Imported("plotly.graph_objects")
pio = _Imported("plotly.io")


def _plain(fig: go.Figure) -> dict:
    """The figure as JSON with Plotly's "plotly_white" look. Naming the template in the layout made
    Plotly resolve and validate it again for every figure (~8 ms of a ~10 ms chart); its JSON is made once."""
    figure = fig.to_plotly_json()
    figure["layout"]["template"] = _white_template()
    return figure


@lru_cache(maxsize=1)
def _white_template() -> dict:
    """plotly_white as JSON, shared by every figure (read-only: pages serialise it, nothing edits it)."""
    return go.layout.Template(pio.templates["plotly_white"]).to_plotly_json()


MEDAL_COLOURS = {"gold": "#d4a017", "silver": "#8a8d91", "bronze": "#b0703c", "median": "#3b6ea5"}


# The chart's words follow the leaderboard's kind: Kaggle's teams, or a reference leaderboard's baselines.
LEADERBOARD_WORDS = {
    False: {"many": "human teams", "one": "team", "unit": "teams", "axis": "private leaderboard score"},
    True: {"many": "reference baselines (not Kaggle humans)", "one": "baseline", "unit": "baselines",
           "axis": "reference leaderboard score"},
}


def human_leaderboard_figure(scores: list[float], thresholds: Thresholds, title: str = "", *,
                             reference: bool = False) -> dict:
    """The figure below, made once per leaderboard (~25 ms of Plotly a view): a competition's human
    scores change only when its catalogue is imported again, and then the key changes with them.
    Callers must not change the figure in place (add_run_marks makes a new one). `reference`: the
    leaderboard is simple baselines, not Kaggle humans, and the chart says so."""
    return _human_leaderboard_figure(tuple(scores), thresholds, title, bool(reference))


@lru_cache(maxsize=128)
def _human_leaderboard_figure(scores: tuple[float, ...], thresholds: Thresholds, title: str,
                              reference: bool) -> dict:
    """Distribution of the leaderboard's scores with the medal and median thresholds drawn on it.

    The x-axis spans the best teams down to the bulk (and every threshold), not the few outliers that
    would squeeze the rest into one bar; how many teams lie outside is said on the chart. Threshold labels
    sit on their own rows so close thresholds never print over each other."""
    low, high = bulk_range(scores, [getattr(thresholds, name) for name in THRESHOLD_NAMES],
                           bool(thresholds.is_lower_better))
    size = (high - low) / 60 or 1.0
    words = LEADERBOARD_WORDS[reference]
    fig = go.Figure(go.Histogram(x=list(scores), xbins={"start": low, "end": high + size / 2, "size": size},
                                 marker_color="#9bb7d4", name=words["many"],
                                 hovertemplate=f"score %{{x}}<br>%{{y}} {words['unit']}<extra></extra>"))
    for row, name in enumerate(sorted(THRESHOLD_NAMES, key=lambda n: getattr(thresholds, n))):
        value = getattr(thresholds, name)
        fig.add_vline(x=value, line_color=MEDAL_COLOURS[name], line_width=2,
                      line_dash="dot" if name == "median" else "solid")
        right_half = value > (low + high) / 2  # labels point inwards, so none is cut at the edge
        fig.add_annotation(x=value, y=1 - 0.1 * row, yref="paper", text=f"{name} {value:g}", showarrow=False,
                           xanchor="right" if right_half else "left", yanchor="top", xshift=-3 if right_half else 3,
                           bgcolor="rgba(255,255,255,0.85)",
                           font={"color": MEDAL_COLOURS[name], "size": 12}, name=f"threshold-{name}")
    direction = "lower is better" if thresholds.is_lower_better else "higher is better"
    arrow = "← better" if thresholds.is_lower_better else "better →"
    outside = sum(1 for s in scores if s < low or s > high)
    outlying = f"{outside} outlying {words['one'] if outside == 1 else words['unit']}"
    note = f"<br><sup>{outlying} outside the axis</sup>" if outside else ""
    fig.update_layout(
        title=(title or f"{thresholds.n_teams} {words['many']} ({direction})") + note,
        xaxis={"title": f"{words['axis']}, {arrow}", "range": [low, high]},
        yaxis=count_axis(words["unit"], scores, low, size), bargap=0.02,
        margin={"l": 50, "r": 20, "t": 60, "b": 50}, height=380,
        showlegend=False,
    )
    return _plain(fig)


THRESHOLD_NAMES = ("gold", "silver", "bronze", "median")


def count_axis(title: str, values, start: float, size: float) -> dict:
    """A histogram's y axis of counts: whole numbers only. Plotly's own ticks go by halves when the
    tallest bar is a few items high ("0.5 teams"), so below 9 every whole number is a tick."""
    tallest = max(Counter(math.floor((v - start) / size) for v in values if v >= start).values(), default=0)
    axis = {"title": title, "rangemode": "tozero", "tickformat": ",d"}
    return {**axis, "tick0": 0, "dtick": 1} if tallest < 9 else axis


def bulk_range(scores: list[float], must_show: list[float], lower_is_better: bool) -> tuple[float, float]:
    """The axis for a leaderboard: every team from the best down to Tukey's outlier fence on the worse
    side (1.5 interquartile ranges past the quartile), widened to every value in must_show. Only the
    worse tail, where failed and joke submissions sit, is cut, and never past the scores' extremes."""
    ordered = sorted(scores)
    n = len(ordered)
    q1, q3 = ordered[int(0.25 * (n - 1))], ordered[int(0.75 * (n - 1))]
    fence = 1.5 * (q3 - q1) or abs(q3) * 0.05 or 1.0
    low = ordered[0] if lower_is_better else max(min(q1 - fence, *must_show), ordered[0])
    high = ordered[-1] if not lower_is_better else min(max(q3 + fence, *must_show), ordered[-1])
    return (low, high) if high > low else (low - fence, high + fence)


def pass_at_k_figure(curves: dict[str, list[tuple[int, float]]]) -> dict:
    """pass@k (% of a split's competitions with a medal in at least one of k seeds) against k."""
    fig = go.Figure()
    for name, points in curves.items():
        fig.add_trace(go.Scatter(x=[k for k, _ in points], y=[v for _, v in points], mode="lines+markers",
                                 name=name, hovertemplate="pass@%{x}: %{y:.1f}%<extra>" + name + "</extra>"))
    fig.update_layout(
        xaxis={"title": "k (attempts = seeds)", "dtick": 1}, yaxis={"title": "any medal, pass@k (%)",
                                                                    "rangemode": "tozero"},
        margin={"l": 60, "r": 20, "t": 20, "b": 50}, height=320,
    )
    return _plain(fig)


def cost_frontier_figure(rows: list[dict], front: list[tuple[float, float]]) -> dict:
    """Any-medal % against mean cost per run, one point per experiment, the Pareto frontier joined.
    Made once per set of points (the leaderboard draws the same one until a run changes it); callers
    must not change the figure in place."""
    points = tuple((r["cost_usd"], r["any_medal_pct"], f"{r['agent']} + {r['model']}") for r in rows)
    return _cost_frontier_figure(points, tuple(front))


@lru_cache(maxsize=64)
def _cost_frontier_figure(points: tuple[tuple[float, float, str], ...], front: tuple[tuple[float, float], ...]) -> dict:
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[c for c, _, _ in points], y=[s for _, s, _ in points], mode="markers", name="experiments",
        text=[label for _, _, label in points], marker={"size": 10, "color": "#2f5fa7"},
        hovertemplate="%{text}<br>$%{x:.2f} per run · %{y:.1f}% any medal<extra></extra>",
    ))
    fig.add_trace(go.Scatter(x=[c for c, _ in front], y=[s for _, s in front], mode="lines", name="Pareto frontier",
                             line={"color": MEDAL_COLOURS["gold"], "dash": "dot"}, hoverinfo="skip"))
    fig.update_layout(
        xaxis={"title": "mean cost per run (USD)", "rangemode": "tozero"},
        yaxis={"title": "any medal (%)", "rangemode": "tozero"},
        margin={"l": 60, "r": 20, "t": 20, "b": 50}, height=340,
    )
    return _plain(fig)


def snapshots_figure(points: list[tuple[float, float | None, str]], thresholds: Thresholds | None) -> dict:
    """A run's graded snapshots: score against the time since start, the human medal thresholds as lines.

    `points` are (seconds, score or None for an invalid snapshot, medal label); invalid snapshots are
    drawn as crosses on the time axis. The axis is in seconds, minutes or hours, whichever the run's
    longest snapshot reads best in (a 2-minute run is not squeezed against 0 h), and each point's hover
    gives its time in words."""
    unit = axis_unit([t for t, _, _ in points])
    fig = go.Figure()
    valid = [(t, s, label) for t, s, label in points if s is not None]
    invalid = [t for t, s, _ in points if s is None]
    fig.add_trace(go.Scatter(
        x=[t / unit["seconds"] for t, _, _ in valid], y=[s for _, s, _ in valid], mode="lines+markers",
        name="snapshot score", text=[label for _, _, label in valid],
        customdata=[format_seconds(t) for t, _, _ in valid], line={"shape": "hv", "color": "#2f5fa7"},
        hovertemplate="%{customdata}<br>score %{y}<br>%{text}<extra></extra>",
    ))
    if invalid:
        fig.add_trace(go.Scatter(
            x=[t / unit["seconds"] for t in invalid], y=[0] * len(invalid), yaxis="y2", mode="markers",
            name="invalid snapshot", customdata=[format_seconds(t) for t in invalid],
            marker={"symbol": "x", "color": "#c0392b", "size": 10},
            hovertemplate="%{customdata}: invalid<extra></extra>",
        ))
    fig.update_layout(
        xaxis={"title": f"time since start ({unit['name']})", "rangemode": "tozero"}, yaxis={"title": "score"},
        yaxis2={"overlaying": "y", "visible": False, "range": [0, 1]}, legend={"orientation": "h"},
        margin={"l": 60, "r": 20, "t": 20, "b": 50}, height=320,
    )
    figure = _plain(fig)
    shapes, annotations = _threshold_lines(thresholds)
    if shapes:
        figure["layout"]["shapes"], figure["layout"]["annotations"] = deepcopy(shapes), deepcopy(annotations)
    return figure


def with_baseline(figure: dict, baseline: float, success_at: float) -> dict:
    """A score chart with a research task's baseline and the score a success needs as lines."""
    shapes = list(figure["layout"].get("shapes", []))
    annotations = list(figure["layout"].get("annotations", []))
    for value, label, colour, dash in ((baseline, "baseline", "#555b66", "dot"),
                                       (success_at, "success (more than 10% better)", "#2e7d32", "dash")):
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": value, "y1": value,
                       "line": {"color": colour, "dash": dash}})
        annotations.append({"xref": "paper", "x": 0, "yref": "y", "y": value, "text": f"{label} {value:g}",
                            "showarrow": False, "xanchor": "left", "yanchor": "bottom", "font": {"color": colour}})
    return {**figure, "layout": {**figure["layout"], "shapes": shapes, "annotations": annotations}}


def research_improvement_figure(bars: list[tuple[str, float, bool, str]], success_pct: float) -> dict:
    """Runs of a research task: (label, improvement over the baseline in %, success, hover text) as
    bars, the success bar as a dashed line."""
    fig = go.Figure(go.Bar(
        x=[b[0] for b in bars], y=[b[1] for b in bars], text=[html.escape(b[3]) for b in bars],
        marker={"color": ["#2e7d32" if b[2] else "#8a8d91" for b in bars]}, textposition="none",
        hovertemplate="%{x}: %{y:.1f}%<br>%{text}<extra></extra>", name="improvement",
    ))
    fig.add_hline(y=success_pct, line_dash="dash", line_color="#2e7d32",
                  annotation_text=f"success: {success_pct:g}% better", annotation_position="top left")
    fig.update_layout(yaxis={"title": "improvement over the baseline (%)"}, height=300,
                      margin={"l": 60, "r": 20, "t": 20, "b": 50}, showlegend=False)
    return _plain(fig)


@lru_cache(maxsize=256)
def _threshold_lines(thresholds: Thresholds | None) -> tuple[list, list]:
    """The medal thresholds as horizontal lines with their labels (layout shapes and annotations), made
    by Plotly once per competition: add_hline cost ~5 ms a line on every run page."""
    fig = go.Figure()
    for name in ("gold", "silver", "bronze", "median"):
        value = getattr(thresholds, name) if thresholds is not None else None
        if value is not None:
            fig.add_hline(y=value, line_color=MEDAL_COLOURS[name], line_dash="dot" if name == "median" else "dash",
                          annotation_text=f"{name} {value:g}", annotation_position="top left",
                          annotation_font_color=MEDAL_COLOURS[name])
    layout = fig.to_plotly_json()["layout"]
    return layout.get("shapes", []), layout.get("annotations", [])


def add_run_marks(figure: dict, marks: list[dict]) -> dict:
    """Agent runs as marks under the human distribution; hovering names the run, clicking opens it."""
    if not marks:
        return figure
    colours = {**MEDAL_COLOURS, "above median": MEDAL_COLOURS["median"], "none": "#555b66"}
    trace = go.Scatter(
        x=[m["score"] for m in marks], y=[0] * len(marks), yaxis="y2", mode="markers", name="agent runs",
        marker={"symbol": "line-ns-open", "size": 22, "line": {"width": 2},
                "color": [colours.get(m["medal"], "#555b66") for m in marks]},
        text=[html.escape(f"{m['label']} · {m['medal']}") for m in marks], customdata=[m["url"] for m in marks],
        hovertemplate="%{text}<br>score %{x}<br>click to open the run<extra></extra>",
    ).to_plotly_json()
    figure = {**figure, "data": [*figure["data"], trace]}
    layout = dict(figure.get("layout", {}))
    layout["yaxis2"] = {"overlaying": "y", "range": [0, 1], "visible": False, "fixedrange": True}
    if "range" in layout.get("xaxis", {}):  # the axis shows the humans' bulk: widen it to every run
        scores = [m["score"] for m in marks]
        low, high = layout["xaxis"]["range"]
        layout["xaxis"] = {**layout["xaxis"], "range": [min(low, *scores), max(high, *scores)]}
    layout["showlegend"] = True
    layout["legend"] = {"orientation": "h", "y": -0.2}
    figure["layout"] = layout
    return figure


# Who an experiment's runs were placed among, by the kinds of its competitions' leaderboards.
BEATEN_WORDS = {
    frozenset({False}): {"many": "human teams", "short": "humans", "title": "Against the humans",
                         "intro": "the share of Kaggle's human teams its runs beat"},
    frozenset({True}): {"many": "reference baselines", "short": "baselines", "title": "Against the reference baselines",
                        "intro": "the share of each reference leaderboard's simple baselines (not Kaggle humans) its "
                                 "runs beat"},
    frozenset({False, True}): {"many": "teams or baselines", "short": "teams or baselines",
                               "title": "Against the leaderboards",
                               "intro": "the share of each leaderboard its runs beat: Kaggle's human teams, or a "
                                        "reference leaderboard's simple baselines (not Kaggle humans)"},
}


def beaten_words(references: set[bool]) -> dict:
    """The words for competitions whose leaderboards are all Kaggle's (False), all reference (True), or both."""
    return BEATEN_WORDS[frozenset(references or {False})]


def beaten_share_figure(shares: list[tuple[str, float]], references: set[bool] = frozenset()) -> dict:
    """An experiment's distribution over its competitions of the % of their leaderboards beaten; the words
    follow the leaderboards' kinds (`references`: has_reference_leaderboard of its competitions)."""
    many = beaten_words(set(references))["many"]
    fig = go.Figure(go.Histogram(
        x=[pct for _, pct in shares], xbins={"start": 0, "end": 100, "size": 5}, marker_color="#2f5fa7",
        name="competitions", hovertemplate=f"%{{x}}% of {many} beaten<br>%{{y}} competitions<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=[pct for _, pct in shares], y=[0] * len(shares), mode="markers", name="competition",
        text=[html.escape(slug) for slug, _ in shares],
        marker={"symbol": "line-ns-open", "size": 14, "color": "#555b66"},
        hovertemplate=f"%{{text}}: beats %{{x:.1f}}% of {many}<extra></extra>",
    ))
    fig.update_layout(
        xaxis={"title": f"share of {many} beaten (%, mean over seeds)", "range": [0, 100]},
        yaxis=count_axis("competitions", [pct for _, pct in shares], 0, 5), bargap=0.05, showlegend=False,
        margin={"l": 60, "r": 20, "t": 20, "b": 50}, height=320,
    )
    return _plain(fig)


def score_axis(competition) -> dict:
    """The metric and its direction for a run's score axes; the direction may be unknown ("")."""
    from leaderboard.grading import grader_for

    if competition is None:
        return {"metric": "score", "direction": ""}
    grader = grader_for(competition)
    metric = grader.metric if grader else competition.config_metric or "score"
    lower = grader.lower_is_better if grader else competition.is_lower_better
    return {"metric": metric, "direction": "" if lower is None else "lower" if lower else "higher"}


def axis_title(axis: dict) -> str:
    direction = f"{axis['direction']} is better" if axis["direction"] else "direction not stated"
    return f"{axis['metric']} ({direction})"


"""Plotly figures, built in Python and drawn in the browser by the locally served plotly.min.js."""

from __future__ import annotations

import html

import plotly.graph_objects as go

from leaderboard.medals import Thresholds

MEDAL_COLOURS = {"gold": "#d4a017", "silver": "#8a8d91", "bronze": "#b0703c", "median": "#3b6ea5"}


def human_leaderboard_figure(scores: list[float], thresholds: Thresholds, title: str = "") -> dict:
    """Distribution of the human teams' scores with the medal and median thresholds drawn on it."""
    fig = go.Figure(go.Histogram(x=scores, nbinsx=60, marker_color="#9bb7d4", name="human teams",
                                 hovertemplate="score %{x}<br>%{y} teams<extra></extra>"))
    for name in ("gold", "silver", "bronze", "median"):
        value = getattr(thresholds, name)
        fig.add_vline(x=value, line_color=MEDAL_COLOURS[name], line_width=2,
                      line_dash="dot" if name == "median" else "solid")
        fig.add_annotation(x=value, y=1, yref="paper", text=f"{name} {value:g}", showarrow=False,
                           textangle=-90, xanchor="right", yanchor="top", font={"color": MEDAL_COLOURS[name]})
    direction = "lower is better" if thresholds.is_lower_better else "higher is better"
    fig.update_layout(
        title=title or f"{thresholds.n_teams} human teams ({direction})",
        xaxis_title="private leaderboard score", yaxis_title="teams", bargap=0.02,
        margin={"l": 50, "r": 20, "t": 50, "b": 50}, height=380, template="plotly_white", showlegend=False,
    )
    return fig.to_plotly_json()


def pass_at_k_figure(curves: dict[str, list[tuple[int, float]]]) -> dict:
    """pass@k (% of a split's competitions with a medal in at least one of k seeds) against k."""
    fig = go.Figure()
    for name, points in curves.items():
        fig.add_trace(go.Scatter(x=[k for k, _ in points], y=[v for _, v in points], mode="lines+markers",
                                 name=name, hovertemplate="pass@%{x}: %{y:.1f}%<extra>" + name + "</extra>"))
    fig.update_layout(
        xaxis={"title": "k (attempts = seeds)", "dtick": 1}, yaxis={"title": "any medal, pass@k (%)",
                                                                    "rangemode": "tozero"},
        margin={"l": 60, "r": 20, "t": 20, "b": 50}, height=320, template="plotly_white",
    )
    return fig.to_plotly_json()


def cost_frontier_figure(rows: list[dict], front: list[tuple[float, float]]) -> dict:
    """Any-medal % against mean cost per run, one point per experiment, the Pareto frontier joined."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[r["cost_usd"] for r in rows], y=[r["any_medal_pct"] for r in rows], mode="markers", name="experiments",
        text=[f"{r['agent']} + {r['model']}" for r in rows], marker={"size": 10, "color": "#2f5fa7"},
        hovertemplate="%{text}<br>$%{x:.2f} per run · %{y:.1f}% any medal<extra></extra>",
    ))
    fig.add_trace(go.Scatter(x=[c for c, _ in front], y=[s for _, s in front], mode="lines", name="Pareto frontier",
                             line={"color": MEDAL_COLOURS["gold"], "dash": "dot"}, hoverinfo="skip"))
    fig.update_layout(
        xaxis={"title": "mean cost per run (USD)", "rangemode": "tozero"},
        yaxis={"title": "any medal (%)", "rangemode": "tozero"},
        margin={"l": 60, "r": 20, "t": 20, "b": 50}, height=340, template="plotly_white",
    )
    return fig.to_plotly_json()


def snapshots_figure(points: list[tuple[float, float | None, str]], thresholds: Thresholds | None) -> dict:
    """A run's graded snapshots: score against hours since start, the human medal thresholds as lines.

    `points` are (seconds, score or None for an invalid snapshot, medal label); invalid snapshots are
    drawn as crosses on the time axis."""
    fig = go.Figure()
    valid = [(t, s, label) for t, s, label in points if s is not None]
    invalid = [t for t, s, _ in points if s is None]
    fig.add_trace(go.Scatter(
        x=[t / 3600 for t, _, _ in valid], y=[s for _, s, _ in valid], mode="lines+markers", name="snapshot score",
        text=[label for _, _, label in valid], line={"shape": "hv", "color": "#2f5fa7"},
        hovertemplate="%{x:.2f} h<br>score %{y}<br>%{text}<extra></extra>",
    ))
    if invalid:
        fig.add_trace(go.Scatter(
            x=[t / 3600 for t in invalid], y=[0] * len(invalid), yaxis="y2", mode="markers", name="invalid snapshot",
            marker={"symbol": "x", "color": "#c0392b", "size": 10}, hovertemplate="%{x:.2f} h: invalid<extra></extra>",
        ))
    for name in ("gold", "silver", "bronze", "median"):
        value = getattr(thresholds, name) if thresholds is not None else None
        if value is not None:
            fig.add_hline(y=value, line_color=MEDAL_COLOURS[name], line_dash="dot" if name == "median" else "dash",
                          annotation_text=f"{name} {value:g}", annotation_position="top left",
                          annotation_font_color=MEDAL_COLOURS[name])
    fig.update_layout(
        xaxis={"title": "hours since start", "rangemode": "tozero"}, yaxis={"title": "score"},
        yaxis2={"overlaying": "y", "visible": False, "range": [0, 1]}, legend={"orientation": "h"},
        margin={"l": 60, "r": 20, "t": 20, "b": 50}, height=320, template="plotly_white",
    )
    return fig.to_plotly_json()


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
    layout["showlegend"] = True
    layout["legend"] = {"orientation": "h", "y": -0.2}
    figure["layout"] = layout
    return figure


def beaten_share_figure(shares: list[tuple[str, float]]) -> dict:
    """An experiment's distribution over its competitions of the % of human teams beaten."""
    fig = go.Figure(go.Histogram(
        x=[pct for _, pct in shares], xbins={"start": 0, "end": 100, "size": 5}, marker_color="#2f5fa7",
        name="competitions", hovertemplate="%{x}% of human teams beaten<br>%{y} competitions<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=[pct for _, pct in shares], y=[0] * len(shares), mode="markers", name="competition",
        text=[html.escape(slug) for slug, _ in shares],
        marker={"symbol": "line-ns-open", "size": 14, "color": "#555b66"},
        hovertemplate="%{text}: beats %{x:.1f}% of human teams<extra></extra>",
    ))
    fig.update_layout(
        xaxis={"title": "share of human teams beaten (%, mean over seeds)", "range": [0, 100]},
        yaxis={"title": "competitions"}, bargap=0.05, showlegend=False,
        margin={"l": 60, "r": 20, "t": 20, "b": 50}, height=320, template="plotly_white",
    )
    return fig.to_plotly_json()

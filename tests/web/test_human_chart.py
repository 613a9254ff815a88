"""The human leaderboard chart: the axis covers the best teams down to the bulk and every threshold,
the outliers it leaves out are counted on the chart, labels sit on separate rows, direction shown."""

from __future__ import annotations

import numpy as np

from leaderboard.competitions import medals
from leaderboard.web.charts import add_run_marks, bulk_range, human_leaderboard_figure


def teams(lower_is_better: bool) -> list[float]:
    bulk = list(np.linspace(0.80, 0.99, 200))
    outliers = [0.0, 0.05, 0.3] if not lower_is_better else [5.0, 9.0, 3.0]
    scores = bulk + outliers
    return sorted(scores, reverse=not lower_is_better)  # best first, as a leaderboard is


def test_higher_is_better_cuts_only_the_low_outliers():
    scores = teams(False)
    thresholds = medals.compute_thresholds(scores)
    figure = human_leaderboard_figure(scores, thresholds)
    low, high = figure["layout"]["xaxis"]["range"]
    # Tukey's fence by hand: quartiles of the 203 scores, 1.5 IQR below the first
    ordered = sorted(scores)
    q1, q3 = ordered[50], ordered[151]
    assert low == max(q1 - 1.5 * (q3 - q1), ordered[0]) and high == max(scores)
    assert all(low <= s <= high for s in np.linspace(0.80, 0.99, 200))
    assert "3 outlying teams outside the axis" in figure["layout"]["title"]["text"]
    assert "(higher is better)" in figure["layout"]["title"]["text"]
    assert figure["layout"]["xaxis"]["title"]["text"].endswith("better →")


def test_lower_is_better_keeps_the_best_low_scores():
    scores = teams(True)
    thresholds = medals.compute_thresholds(scores)
    low, high = bulk_range(scores, [thresholds.gold, thresholds.median], True)
    assert low == min(scores) and high < 3.0 and high >= 0.99


def test_threshold_labels_have_their_own_rows_and_point_inwards():
    scores = teams(False)
    figure = human_leaderboard_figure(scores, medals.compute_thresholds(scores))
    labels = [a for a in figure["layout"]["annotations"] if str(a.get("name", "")).startswith("threshold-")]
    assert len(labels) == 4 and len({a["y"] for a in labels}) == 4
    low, high = figure["layout"]["xaxis"]["range"]
    for label in labels:
        assert label["xanchor"] == ("right" if label["x"] > (low + high) / 2 else "left")


def test_thresholds_outside_the_bulk_widen_the_axis():
    scores = [0.9] * 50 + [0.91] * 50 + [0.2]
    low, _ = bulk_range(scores, [0.5], False)
    assert low == 0.5


def test_the_figure_is_made_once_per_leaderboard_and_marks_leave_it_alone():
    scores = [float(s) for s in range(100, 0, -1)]
    thresholds = medals.compute_thresholds(scores)
    first = human_leaderboard_figure(scores, thresholds)
    marked = add_run_marks(first, [{"score": 250.0, "medal": "gold", "label": "run 1", "url": "/runs/1/"}])
    assert human_leaderboard_figure(list(scores), thresholds) is first  # the same leaderboard: no new figure
    assert len(first["data"]) == 1 and first["layout"]["xaxis"]["range"][1] == 100.0
    assert len(marked["data"]) == 2 and marked["layout"]["xaxis"]["range"][1] == 250.0
    assert human_leaderboard_figure(scores[:-1], medals.compute_thresholds(scores[:-1])) is not first


def test_a_histogram_of_few_counts_has_whole_number_ticks():
    """A bar a few items tall: Plotly's own ticks would be 0, 0.5, 1, ... (half a team)."""
    scores = [0.1, 0.2, 0.2, 0.3, 0.5, 0.9]
    axis = human_leaderboard_figure(scores, medals.compute_thresholds(scores))["layout"]["yaxis"]
    assert (axis["tick0"], axis["dtick"], axis["tickformat"]) == (0, 1, ",d")
    many = list(np.linspace(0.80, 0.99, 3000))  # thousands of teams: Plotly's ticks are whole numbers anyway
    axis = human_leaderboard_figure(many, medals.compute_thresholds(many))["layout"]["yaxis"]
    assert "dtick" not in axis and axis["tickformat"] == ",d"

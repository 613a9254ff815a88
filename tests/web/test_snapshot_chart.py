"""A run's score-over-time chart draws each medal threshold as a labelled line; the lines are made once
per competition and every figure gets its own copy."""

from leaderboard.competitions.medals import Thresholds
from leaderboard.web.charts import snapshots_figure

THRESHOLDS = Thresholds(n_teams=500, is_lower_better=True, gold=0.12, silver=0.2, bronze=0.25, median=0.5)
POINTS = [(600.0, 0.4, "above median"), (1200.0, None, "none"), (3600.0, 0.18, "silver")]


def test_every_threshold_is_a_labelled_line_at_its_score():
    layout = snapshots_figure(POINTS, THRESHOLDS)["layout"]
    assert sorted(shape["y0"] for shape in layout["shapes"]) == [0.12, 0.2, 0.25, 0.5]
    assert all(shape["y0"] == shape["y1"] and shape["xref"] == "x domain" for shape in layout["shapes"])
    assert sorted(a["text"] for a in layout["annotations"]) == ["bronze 0.25", "gold 0.12", "median 0.5", "silver 0.2"]


def test_figures_do_not_share_their_lines():
    first, second = snapshots_figure(POINTS, THRESHOLDS), snapshots_figure(POINTS, THRESHOLDS)
    first["layout"]["shapes"][0]["y0"] = 99
    assert second["layout"]["shapes"][0]["y0"] != 99
    assert snapshots_figure(POINTS, THRESHOLDS) == second


def test_no_thresholds_no_lines():
    assert "shapes" not in snapshots_figure(POINTS, None)["layout"]


def test_the_time_axis_follows_the_run_length():
    """A 2-minute run's snapshots are drawn in seconds (not squeezed against 0 h), an hours-long run's in hours;
    each hover gives the time in words."""
    short = snapshots_figure([(10.0, 0.5, "none"), (45.0, None, "none"), (110.0, 0.3, "gold")], THRESHOLDS)
    assert short["layout"]["xaxis"]["title"]["text"] == "time since start (seconds)"
    assert list(short["data"][0]["x"]) == [10.0, 110.0] and list(short["data"][1]["x"]) == [45.0]
    assert list(short["data"][0]["customdata"]) == ["10 s", "1 min 50 s"]
    long = snapshots_figure([(1800.0, 0.5, "none"), (5400.0, 0.3, "gold"), (36000.0, 0.2, "gold")], THRESHOLDS)
    assert long["layout"]["xaxis"]["title"]["text"] == "time since start (hours)"
    assert list(long["data"][0]["x"]) == [0.5, 1.5, 10.0]
    assert list(long["data"][0]["customdata"]) == ["30 min", "1 h 30 min", "10 h"]

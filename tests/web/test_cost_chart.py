"""The leaderboard's cost chart: one point per experiment, the Pareto frontier joined; the same points
give the same figure without building it again, and any changed point gives a new one."""

from leaderboard.web.charts import cost_frontier_figure


def rows(cost_of_first: float) -> list[dict]:
    return [{"cost_usd": cost_of_first, "any_medal_pct": 40.0, "agent": "a <b>", "model": "m"},
            {"cost_usd": 3.0, "any_medal_pct": 10.0, "agent": "c", "model": "d"}]


def test_points_and_frontier():
    figure = cost_frontier_figure(rows(1.0), [(1.0, 40.0)])
    points, frontier = figure["data"]
    assert points["x"] == [1.0, 3.0] and points["y"] == [40.0, 10.0] and points["text"] == ["a <b> + m", "c + d"]
    assert frontier["x"] == [1.0] and frontier["y"] == [40.0]


def test_same_points_same_figure_changed_point_new_figure():
    first = cost_frontier_figure(rows(1.0), [(1.0, 40.0)])
    assert cost_frontier_figure(rows(1.0), [(1.0, 40.0)]) is first
    changed = cost_frontier_figure(rows(2.0), [(2.0, 40.0)])
    assert changed["data"][0]["x"] == [2.0, 3.0] and first["data"][0]["x"] == [1.0, 3.0]

"""/compare/?runs=a,b: side by side by index or time, overlaid scores, best solutions diffed."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from leaderboard.web.replay import best_code_step
from tests.web.test_replay_page import add_steps, make_run


def code(content: str, **extra) -> dict:
    return {"kind": "code", "data": {"file": "solution.py", "content": content, **extra.pop("data", {})}, **extra}


@pytest.fixture
def pair(db):
    a, b = make_run(task_name="task-a"), make_run(task_name="task-b")
    add_steps(a, [{"title": "A plan", "t": 0.0}, code("x = 1\nprint(x)\n", t=10.0, data={"is_best": True}),
                  code("x = 2\n", t=20.0), {"kind": "score", "score": 0.6, "t": 30.0}])
    add_steps(b, [{"title": "B plan", "t": 5.0}, code("x = 1\nprint(x + 1)\n", t=15.0)])
    return a, b


def compare(client, a, b, **params):
    return client.get(reverse("compare"), {"runs": f"{a.pk},{b.pk}", **params})


def test_shows_both_runs_and_links_their_replays(client, pair):
    a, b = pair
    html = compare(client, a, b).content.decode()
    assert reverse("run-detail", args=[a.pk]) in html and reverse("run-detail", args=[b.pk]) in html
    assert "task-a" in html and "task-b" in html


def test_aligns_by_index(client, pair):
    html = compare(client, *pair).content.decode()
    assert 'id="a-step-0"' in html and 'id="b-step-0"' in html and 'id="step-0"' not in html
    keys = re.findall(r'<th class="small muted">([^<]+)</th>', html)
    assert keys == ["#0", "#1", "#2", "#3"]


def test_aligns_by_time(client, pair):
    html = compare(client, *pair, align="time").content.decode()
    keys = re.findall(r'<th class="small muted">([^<]+)</th>', html)
    assert keys == ["0.0s", "5.0s", "10.0s", "15.0s", "20.0s", "30.0s"]
    assert html.index("A plan") < html.index("B plan")


def test_diffs_the_best_solutions(client, pair):
    html = compare(client, *pair).content.decode()
    diff = html[html.index('id="solution-diff"'):]
    assert '<span class="del">-print(x)</span>' in diff and '<span class="add">+print(x + 1)</span>' in diff


def test_overlays_both_score_series(client, pair):
    a, b = pair
    html = compare(client, a, b).content.decode()
    data = json.loads(re.search(r'id="compare-scores-data" type="application/json">(.*?)</script>', html).group(1))
    assert data["a"]["y"] == [0.6] and data["a"]["customdata"] == [3] and data["a"]["run"] == a.pk
    assert data["b"]["y"] == []


def test_best_is_the_best_scoring_code_step_else_the_last(db, catalogue):
    run = make_run()
    add_steps(run, [code("a", score=0.2), code("b", score=0.9), code("c", score=0.5), code("d")])
    assert best_code_step(run).index == 1
    run.competition = catalogue.filter(is_lower_better=True).first()
    assert best_code_step(run).index == 0
    unscored = make_run()
    add_steps(unscored, [code("a"), {"kind": "plan"}, code("b"), {"kind": "plan"}])
    assert best_code_step(unscored).index == 2


def test_without_two_runs_it_is_a_picker(client, db):
    for params in ({"runs": "1"}, {}):
        response = client.get(reverse("compare"), params)
        assert response.status_code == 200 and b"Pick two runs to compare" in response.content


def test_private_run_of_someone_else_is_404(client, alice, bob):
    mine, theirs = make_run(owner=bob), make_run(owner=alice, is_private=True)
    client.force_login(bob)
    assert compare(client, mine, theirs).status_code == 404
    client.force_login(alice)
    assert compare(client, mine, theirs).status_code == 200

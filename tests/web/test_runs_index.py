"""The runs index (/runs/): filters, sorting, paging, private runs, and /compare/'s picker; the
competition page's own list of runs, best first."""

from __future__ import annotations

import re

import pytest

from leaderboard.models import Run
from leaderboard.web.runs_index import PAGE_SIZE
from tests.web.test_leaderboard import experiment
from tests.web.test_replay_page import make_run


def run_ids(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'<a href="/runs/(\d+)/">run \d+</a>', html)]


@pytest.fixture
def runs(catalogue, alice, bob):
    titanic, cactus = catalogue.get(slug="spaceship-titanic"), catalogue.get(slug="aerial-cactus-identification")
    aide, mlab = experiment("aide", "gpt-4o"), experiment("mlab", "claude")
    made = {
        "titanic_low": make_run(competition=titanic, score=0.70, status="graded", owner=alice),
        "titanic_high": make_run(competition=titanic, score=0.81, status="graded", owner=bob,
                                 verification=Run.Verification.VERIFIED),
        "titanic_waiting": make_run(competition=titanic, status=Run.Status.WAITING, owner=alice),
        "cactus": make_run(competition=cactus, score=0.99, status="graded", owner=bob),
        "private": make_run(competition=cactus, score=0.5, status="graded", owner=alice, is_private=True),
    }
    for name, run in made.items():
        run.experiment = mlab if name == "cactus" else aide
        run.save()
    return made


def test_filters_combine_and_private_runs_stay_private(client, runs, alice):
    html = client.get("/runs/?competition=spaceship-titanic&agent=aid").content.decode()
    assert set(run_ids(html)) == {runs[k].pk for k in ("titanic_low", "titanic_high", "titanic_waiting")}
    assert run_ids(client.get("/runs/?status=waiting").content.decode()) == [runs["titanic_waiting"].pk]
    assert run_ids(client.get("/runs/?verification=verified").content.decode()) == [runs["titanic_high"].pk]
    assert run_ids(client.get("/runs/?model=claude").content.decode()) == [runs["cactus"].pk]
    assert set(run_ids(client.get("/runs/?owner=bob").content.decode())) == {runs["titanic_high"].pk, runs["cactus"].pk}
    assert runs["private"].pk not in run_ids(client.get("/runs/").content.decode())
    client.force_login(alice)
    assert runs["private"].pk in run_ids(client.get("/runs/").content.decode())


def test_split_filter_and_unknown_split(client, runs):
    lite = run_ids(client.get("/runs/?split=lite").content.decode())
    assert runs["cactus"].pk in lite and runs["titanic_low"].pk not in lite  # titanic is a dev competition
    assert "No runs match these filters" in client.get("/runs/?split=nope").content.decode()


def test_sorting_by_score_and_best_in_the_metrics_direction(client, runs):
    by_score = run_ids(client.get("/runs/?sort=-score").content.decode())
    assert by_score[:3] == [runs["cactus"].pk, runs["titanic_high"].pk, runs["titanic_low"].pk]
    assert by_score[-1] == runs["titanic_waiting"].pk  # no score: last
    best = run_ids(client.get("/runs/?competition=spaceship-titanic&sort=best").content.decode())
    assert best == [runs["titanic_high"].pk, runs["titanic_low"].pk, runs["titanic_waiting"].pk]


def test_paging_keeps_the_filters(client, catalogue):
    titanic = catalogue.get(slug="spaceship-titanic")
    made = [make_run(competition=titanic, seed=i) for i in range(PAGE_SIZE + 3)]
    first = client.get("/runs/?competition=spaceship-titanic").content.decode()
    assert len(run_ids(first)) == PAGE_SIZE and "page 1 of 2" in first
    assert "?competition=spaceship-titanic&amp;page=2" in first
    second = run_ids(client.get("/runs/?competition=spaceship-titanic&page=2").content.decode())
    assert sorted(second) == [r.pk for r in made[:3]]  # newest first: the three oldest are on page 2


def test_compare_without_two_runs_is_a_picker_not_a_404(client, runs):
    response = client.get("/compare/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="compare-notice"' in html and 'id="compare-picker"' in html and 'name="runs"' in html
    one = client.get(f"/compare/?runs={runs['cactus'].pk}")
    assert one.status_code == 200 and "Pick two runs" in one.content.decode()
    both = client.get(f"/compare/?runs={runs['cactus'].pk}&runs={runs['titanic_low'].pk}")
    assert both.status_code == 200 and "<h1>Compare runs</h1>" in both.content.decode()


def test_the_competition_page_lists_its_runs_best_first(client, runs):
    html = client.get("/competitions/spaceship-titanic/").content.decode()
    section = html[html.index('id="competition-runs"'):]
    section = section[:section.index("</section>")]  # the runs table, not the failure breakdown after it
    assert run_ids(section) == [runs["titanic_high"].pk, runs["titanic_low"].pk, runs["titanic_waiting"].pk]
    assert "aide" in section and "gpt-4o" in section and "waiting for answers" in section
    assert "Rank among" in section


def test_the_runs_index_query_count_does_not_grow(client, catalogue, django_assert_max_num_queries):
    titanic = catalogue.get(slug="spaceship-titanic")
    for i in range(30):
        make_run(competition=titanic, seed=i)
    with django_assert_max_num_queries(8):
        assert client.get("/runs/").status_code == 200

"""The leaderboard's flag for experiments whose runs have open or confirmed findings, its "no findings
only" filter, the CSV, the cache following findings, and a pinned query count."""

from __future__ import annotations

import csv
import io

import pytest

from leaderboard.models import Agent, Experiment, LanguageModel, Run, Split
from leaderboard.trust.decisions import decide
from leaderboard.trust.models import Finding
from leaderboard.trust.review import review_run
from tests.trust.support import HONEST, add_steps, command

pytestmark = pytest.mark.django_db
CHEAT = command("cat /home/data/../private/answers.csv")


def experiment(name: str) -> Experiment:
    agent, _ = Agent.objects.get_or_create(name=name)
    model, _ = LanguageModel.objects.get_or_create(name="gpt-4o")
    return Experiment.objects.create(agent=agent, model=model)


@pytest.fixture
def board(catalogue):
    """Two experiments, one seed over every Lite competition; `flagged` has one run that cheats."""
    lite = Split.objects.get(slug="low").competitions.all()
    made = {}
    for name in ("clean", "flagged"):
        e = experiment(name)
        runs = [Run.objects.create(experiment=e, competition=c, task_name=c.slug, status=Run.Status.GRADED,
                                   score=0.5, valid_submission=True, submission_exists=True) for c in lite]
        made[name] = (e, runs)
    cheat = made["flagged"][1][0]
    add_steps(cheat, [*HONEST, CHEAT])
    review_run(cheat)
    return made


def rows(client, query: str = "") -> dict[str, dict]:
    body = client.get(f"/api/leaderboard/?split=lite{query}").json()
    return {row["agent"]: row for row in body["results"]}


def test_rows_carry_the_count_and_the_filter_keeps_clean_ones(client, board):
    assert {a: r["findings"] for a, r in rows(client).items()} == {"clean": 0, "flagged": 1}
    assert set(rows(client, "&no_findings=true")) == {"clean"}
    page = client.get("/?split=lite").content.decode()
    assert "⚑ 1 flagged" in page and 'name="no_findings"' in page
    assert "flagged" not in client.get("/?split=lite&no_findings=true").content.decode().split("<tbody>")[1]


def test_the_csv_has_the_findings_column(client, board):
    text = client.get("/?split=lite&format=csv").content.decode()
    by_agent = {row["agent"]: row for row in csv.DictReader(io.StringIO(text))}
    assert by_agent["flagged"]["findings"] == "1" and by_agent["clean"]["findings"] == "0"


def test_a_dismissed_finding_no_longer_flags_and_the_cache_follows(client, board, staff):
    assert rows(client)["flagged"]["findings"] == 1  # cached now
    decide(finding=Finding.objects.get(), user=staff, status="dismissed", reason="a decoy file")
    assert rows(client)["flagged"]["findings"] == 0
    assert set(rows(client, "&no_findings=true")) == {"clean", "flagged"}
    decide(finding=Finding.objects.get(), user=staff, status="confirmed", reason="on second look, real")
    assert rows(client)["flagged"]["findings"] == 1


def test_a_private_runs_finding_flags_only_for_those_who_see_it(client, board, alice, staff):
    cheat = board["flagged"][1][0]
    Run.objects.filter(pk=cheat.pk).update(is_private=True, owner=alice)
    assert rows(client)["flagged"]["findings"] == 0
    client.force_login(staff)
    assert rows(client)["flagged"]["findings"] == 1
    client.force_login(alice)
    assert rows(client)["flagged"]["findings"] == 1


@pytest.mark.parametrize("n_flagged", [1, 20])
def test_the_flag_costs_one_query_however_many_runs_are_flagged(client, board, n_flagged,
                                                                django_assert_num_queries):
    for run in board["flagged"][1][1:n_flagged]:
        Finding.objects.create(run=run, check_name="network", summary="tried pip", steps=[0])
    # version, split, its competitions, the seed aggregates, their experiments, the flagged runs
    with django_assert_num_queries(6):
        answer = client.get("/api/leaderboard/?split=lite&no_findings=true")
    assert [r["agent"] for r in answer.json()["results"]] == ["clean"]

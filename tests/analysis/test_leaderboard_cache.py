"""The leaderboard cache (leaderboard.analysis.page_cache): a repeat is served from it, every write that changes
what the leaderboard shows changes the next response, audiences never see each other's rows, and
the version rises in the writing transaction (a rolled-back write leaves it)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from leaderboard import tasks
from leaderboard.analysis import page_cache, ranking, stats
from leaderboard.analysis.aggregates.models import LeaderboardVersion
from leaderboard.models import Agent, Benchmark, Experiment, LanguageModel, Run, Split, Team
from leaderboard.runs import ownership
from leaderboard.runs import submission as services
from tests.runs.test_submission import answers_for, eager, submit  # noqa: F401 - eager is a fixture

SPLIT = "spaceship-titanic"  # a one-competition split of the catalogue, the one `submit` uploads to
API = f"/api/leaderboard/?split={SPLIT}"
PAGE = f"/?split={SPLIT}"


@pytest.fixture(autouse=True)
def version_row(db):
    """The migration's row (a flushed database, after a transactional test, has lost it)."""
    LeaderboardVersion.objects.get_or_create(pk=1)


def rows(client, url: str = API) -> list[dict]:
    response = client.get(url)
    assert response.status_code == 200
    return response.json()["results"]


def cached_rows(client, url: str = API) -> list[dict]:
    """The rows, asked for twice: the second answer comes from the cache and is the same."""
    first = rows(client, url)
    hits = page_cache.stats["hits"]
    assert rows(client, url) == first and page_cache.stats["hits"] == hits + 1
    return first


def only(client) -> dict:
    found = cached_rows(client)
    assert len(found) == 1
    return found[0]


@pytest.fixture
def self_reported(alice, catalogue):
    """One public self-reported run of alice (graded on upload): one row on SPLIT."""
    return submit(alice, self_reported_score=0.5, verification=Run.Verification.SELF_REPORTED)


def test_a_repeat_is_served_from_the_cache_with_one_query(client, self_reported):
    first = rows(client)
    with CaptureQueriesContext(connection) as repeat:
        assert rows(client) == first
    assert len(repeat) == 1  # the version; nothing else is read
    page = client.get(PAGE).content.decode()
    with CaptureQueriesContext(connection) as repeat_page:
        assert client.get(PAGE).content.decode() == page
    assert len(repeat_page) <= 3  # the version, the research section, the split of published results
    assert "aide" in page


def test_cached_rows_equal_the_rows_computed_from_the_runs(client, self_reported):
    cached = cached_rows(client)
    _, reference = ranking.leaderboard_from_runs(split_slug=SPLIT, user=AnonymousUser())
    assert cached == [{**row.row(), "findings": 0} for row in reference]  # no run has a rule-check finding


def test_upload_then_grading_shows_the_run(alice, client, catalogue, tmp_path):
    answers_for(tmp_path, catalogue)
    run = submit(alice)
    assert cached_rows(client) == []  # pending
    tasks.grade_run.apply(args=[run.pk])
    assert only(client)["n_runs_in_split"] == 1


@pytest.mark.usefixtures("eager")
def test_regrade_shows_the_run(alice, client, catalogue, tmp_path, django_capture_on_commit_callbacks):
    from leaderboard.runs.regrading import regrade

    with django_capture_on_commit_callbacks(execute=True):
        run = submit(alice)
    assert cached_rows(client) == []  # waiting for answers
    answers_for(tmp_path, catalogue)
    regrade(run_ids=[run.pk])
    assert only(client)["n_runs_in_split"] == 1


def test_privacy_edit_and_delete(alice, client, self_reported):
    assert only(client)["agent"] == "aide"
    services.update_run(run=self_reported, user=alice, notes="", is_private=True)
    assert cached_rows(client) == []
    services.update_run(run=Run.objects.get(pk=self_reported.pk), user=alice, notes="", is_private=False)
    assert only(client)["agent"] == "aide"
    services.delete_run(run=Run.objects.get(pk=self_reported.pk), user=alice)
    assert cached_rows(client) == []


def test_deleting_the_owner_then_the_experiment(alice, client, self_reported):
    assert only(client)["owner"] == "alice"
    alice.delete()  # the experiment keeps its runs, its owner becomes "a deleted user"
    assert only(client)["owner"] == "a deleted user"
    Experiment.objects.get(pk=self_reported.experiment_id).delete()
    assert cached_rows(client) == []


def test_renames_of_experiment_agent_model_user_and_team(alice, client, self_reported):
    experiment = self_reported.experiment
    assert only(client)["owner"] == "alice"
    experiment.hardware = "8x H100"
    experiment.save()
    assert only(client)["hardware"] == "8x H100"
    agent = experiment.agent
    agent.name = "aide-renamed"
    agent.save()
    assert only(client)["agent"].startswith("aide-renamed")
    model = LanguageModel.objects.get(pk=experiment.model_id)
    model.name = "gpt-4o-renamed"
    model.save()
    assert only(client)["model"] == "gpt-4o-renamed"
    alice.username = "alice-renamed"
    alice.save()
    assert only(client)["owner"] == "alice-renamed"
    team = Team.objects.create(name="lab")
    ownership.transfer_experiment(experiment=Experiment.objects.get(pk=experiment.pk), owner=team)
    assert only(client)["owner"] == "team lab"
    team.name = "lab-renamed"
    team.save()
    assert only(client)["owner"] == "team lab-renamed"


def test_split_membership_change(client, catalogue, self_reported):
    tiny = Split.objects.create(benchmark=Benchmark.objects.get(slug="mle-bench"), slug="tiny", name="Tiny")
    url = "/api/leaderboard/?split=tiny"
    assert cached_rows(client, url) == []
    tiny.competitions.add(self_reported.competition)
    assert [r["n_competitions"] for r in cached_rows(client, url)] == [1]
    tiny.competitions.add(*stats.resolve_split("lite").competitions.exclude(pk=self_reported.competition_id)[:2])
    assert [r["n_competitions"] for r in cached_rows(client, url)] == [3]
    tiny.competitions.clear()
    assert cached_rows(client, url) == []


def test_audiences_never_share_rows(alice, bob, staff, client, catalogue):
    submit(alice, self_reported_score=0.5, verification=Run.Verification.SELF_REPORTED, is_private=True)
    agents = {}
    for name, user in [("anonymous", None), ("staff", staff), ("alice", alice), ("bob", bob),
                       ("anonymous again", None), ("staff again", staff)]:
        client.logout()
        if user is not None:
            client.force_login(user)
        agents[name] = [r["agent"] for r in rows(client)]
        page = client.get(PAGE).content.decode()
        assert ("aide" in page) == bool(agents[name]), name
    assert agents == {"anonymous": [], "staff": ["aide"], "alice": ["aide"], "bob": [],
                      "anonymous again": [], "staff again": ["aide"]}


def test_an_owner_with_private_runs_bypasses_the_cache(alice, client, catalogue):
    submit(alice, self_reported_score=0.5, verification=Run.Verification.SELF_REPORTED, is_private=True)
    client.force_login(alice)
    hits, misses = page_cache.stats["hits"], page_cache.stats["misses"]
    assert [r["agent"] for r in rows(client)] == [r["agent"] for r in rows(client)] == ["aide"]
    assert (page_cache.stats["hits"], page_cache.stats["misses"]) == (hits, misses)


def test_the_page_header_is_per_request(alice, bob, client, catalogue):
    """The cached part holds no user and no CSRF token: each viewer sees their own name in the header."""
    pages = {}
    for user in (alice, bob):
        client.force_login(user)
        pages[user.username] = client.get("/").content.decode()
    assert page_cache.stats["hits"] >= 1  # bob's table came from alice's request
    assert "alice · " in pages["alice"] and "alice" not in pages["bob"]
    assert "bob · " in pages["bob"] and "bob" not in pages["alice"]
    board = pages["bob"].split("<h1>")[1].split('id="research-results"')[0]
    assert "csrf" not in board


def version() -> int:
    return LeaderboardVersion.objects.get(pk=1).n


@pytest.mark.django_db(transaction=True)
def test_the_version_rises_in_the_writing_transaction(catalogue, django_user_model):
    lite = stats.resolve_split("lite").competitions.first()
    agent, model = Agent.objects.create(name="tx"), LanguageModel.objects.create(name="tx-model")
    experiment = Experiment.objects.create(agent=agent, model=model, hardware="", time_limit_hours=24)
    before = version()
    with pytest.raises(RuntimeError), transaction.atomic():
        Run.objects.create(experiment=experiment, competition=lite, seed=0, status=Run.Status.GRADED, any_medal=True)
        assert version() > before  # raised inside the transaction ...
        raise RuntimeError("roll back")
    assert version() == before  # ... and rolled back with it
    with pytest.raises(RuntimeError), transaction.atomic():
        experiment.hardware = "renamed"
        experiment.save()
        raise RuntimeError("roll back")
    assert version() == before
    Run.objects.create(experiment=experiment, competition=lite, seed=0, status=Run.Status.GRADED, any_medal=True)
    assert version() > before
    signed_in = version()
    user = django_user_model.objects.create_user("tx-user")
    user.last_login = user.date_joined
    user.save(update_fields=["last_login"])  # signing in changes nothing the leaderboard shows
    assert version() == signed_in  # nor does a new user: no board shows them before a graded run
    user.username = "tx-user-renamed"
    user.save()
    assert version() == signed_in + 1  # a rename does (owner labels)


def test_a_new_experiment_does_not_take_the_version_lock_until_a_run_is_graded(catalogue):
    """Creating the rows an upload starts with (agent, model, experiment) leaves the version alone, so
    a long import in the same transaction does not hold its row lock; the graded run raises it."""
    lite = stats.resolve_split("lite").competitions.first()
    before = version()
    with transaction.atomic():
        experiment = Experiment.objects.create(agent=Agent.objects.create(name="new"),
                                               model=LanguageModel.objects.create(name="new-model"),
                                               hardware="", time_limit_hours=24)
        assert version() == before
        Run.objects.create(experiment=experiment, competition=lite, seed=0, status=Run.Status.GRADED)
        assert version() > before


def test_the_published_table_follows_its_file(client, catalogue, settings, tmp_path):
    """The published results come from a file, not the database: the cached page is keyed by it."""
    header = "agent,llm,low_pct,low_sem,medium_pct,medium_sem,high_pct,high_sem,all_pct,all_sem,hours,date\n"
    settings.CATALOGUE_DIR = tmp_path
    (tmp_path / "published-results.csv").write_text(header + "FirstAgent,m,1,0,1,0,1,0,1,0,24,2026-01-01\n")
    assert "FirstAgent" in client.get("/").content.decode()
    assert "FirstAgent" in client.get("/").content.decode()  # from the cache
    (tmp_path / "published-results.csv").write_text(header + "SecondAgentName,m,2,0,2,0,2,0,2,0,24,2026-01-02\n")
    page = client.get("/").content.decode()
    assert "SecondAgentName" in page and "FirstAgent" not in page

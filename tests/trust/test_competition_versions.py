"""A competition's version: a maintainer raises it with a note, each run records the version it was
graded on, and a version change splits an experiment's leaderboard row into one row per version,
each with its own mean ± SEM, saying its version; the cached board follows the change."""

from __future__ import annotations

import csv
import io
import math
import random
import statistics

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.management import CommandError, call_command

from leaderboard import tasks
from leaderboard.analysis import page_cache
from leaderboard.analysis.aggregates.models import LeaderboardVersion, SeedAggregate
from leaderboard.models import Competition, CompetitionVersion, Run
from leaderboard.trust.versions import VersionError, bump_version
from tests.analysis import test_leaderboard_aggregates as aggregates
from tests.analysis.test_leaderboard_aggregates import (
    RandomWrites,
    assert_leaderboards_match,
    computed_rows,
    experiment,
    stored_rows,
)
from tests.runs.test_submission import answers_for, submit

tiny = aggregates.tiny  # a fixture: a 3-competition split of Lite

API = "/api/leaderboard/?split=tiny"
# Any medal per seed and competition (A, B, C of the tiny split), graded on version 1 ...
V1 = {0: (1, 0, 1), 1: (0, 0, 1), 2: (0, 1, 1)}
# ... and A graded again on version 2 for seeds 0 and 1.
V2_A = {0: 0, 1: 0}


@pytest.fixture(autouse=True)
def version_row(db):
    LeaderboardVersion.objects.get_or_create(pk=1)


def graded(exp, competition: Competition, seed: int, medal: int, version: int = 1) -> Run:
    return Run.objects.create(
        experiment=exp, competition=competition, seed=seed, status=Run.Status.GRADED,
        verification=Run.Verification.VERIFIED, any_medal=bool(medal), gold_medal=bool(medal),
        valid_submission=True, competition_version=version,
    )


def mean_sem(shares: list[float]) -> tuple[float, float | None]:
    """The independent computation: mean and SEM (ddof 1) of per-seed shares."""
    sem = statistics.stdev(shares) / math.sqrt(len(shares)) if len(shares) > 1 else None
    return statistics.fmean(shares), sem


@pytest.fixture
def rerun(tiny):
    """An experiment with 3 complete seeds on version 1, then A changed and seeds 0 and 1 re-run on A."""
    a, b, c = tiny.competitions.order_by("slug")
    exp = experiment("versioned")
    for seed, medals in V1.items():
        for competition, medal in zip((a, b, c), medals, strict=True):
            graded(exp, competition, seed, medal)
    bump_version(competition=a, note="the test split leaked into train.csv; fixed")
    for seed, medal in V2_A.items():
        graded(exp, a, seed, medal, version=2)
    return exp, (a, b, c)


def test_a_version_change_splits_the_row_and_each_version_has_its_own_mean(client, rerun):
    exp, (a, _, _) = rerun
    v1 = [100 * sum(medals) / 3 for medals in V1.values()]
    v2 = [100 * (V2_A[seed] + V1[seed][1] + V1[seed][2]) / 3 for seed in V2_A]
    mixed = [100 * (V2_A.get(seed, medals[0]) + medals[1] + medals[2]) / 3 for seed, medals in V1.items()]
    assert len({statistics.fmean(v1), statistics.fmean(v2), statistics.fmean(mixed)}) == 3  # the data tells them apart

    rows = client.get(API).json()["results"]
    assert [(r["experiment_id"], r["competition_versions"], r["n_seeds"]) for r in rows] == [
        (exp.pk, f"{a.slug} v1", 3), (exp.pk, f"{a.slug} v2", 2)]
    for row, shares in zip(rows, (v1, v2), strict=True):
        mean, sem = mean_sem(shares)
        assert row["any_medal_pct"] == round(mean, 2)
        assert row["any_medal_sem"] == (None if sem is None else round(sem, 2))
    assert rows[1]["any_medal_sem"] == 0.0  # both version-2 seeds: 1 of 3
    # the aggregates hold one row per version signature, and equal the runs' computation
    assert set(SeedAggregate.objects.filter(experiment=exp).values_list("versions", flat=True)) == {"", f"{a.pk}:2"}
    assert stored_rows() == computed_rows()
    assert_leaderboards_match([AnonymousUser()], splits=("tiny",))


def test_the_csv_and_the_page_say_which_version_a_row_used(client, rerun):
    _, (a, _, _) = rerun
    found = list(csv.DictReader(io.StringIO(client.get(API + "&format=csv").content.decode())))
    assert [r["competition_versions"] for r in found] == [f"{a.slug} v1", f"{a.slug} v2"]
    page = client.get("/?split=tiny").content.decode()
    assert f"{a.slug} v1" in page and f"{a.slug} v2" in page


def test_a_competition_outside_the_split_does_not_split_its_rows(client, tiny, catalogue):
    a, b, c = tiny.competitions.order_by("slug")
    outside = Competition.objects.filter(splits__slug="low").exclude(pk__in=[a.pk, b.pk, c.pk]).first()
    exp = experiment("unaffected")
    for competition in (a, b, c):
        graded(exp, competition, 0, 1)
    bump_version(competition=outside, note="changed")
    graded(exp, outside, 0, 0, version=2)
    rows = client.get(API).json()["results"]
    assert [(r["competition_versions"], r["any_medal_pct"]) for r in rows] == [("", 100.0)]


def test_the_cached_board_follows_a_version_bump(client, tiny):
    a, b, c = tiny.competitions.order_by("slug")
    exp = experiment("cached")
    for competition in (a, b, c):
        graded(exp, competition, 0, 1)
    first = client.get(API).json()["results"]
    hits = page_cache.stats["hits"]
    assert client.get(API).json()["results"] == first and page_cache.stats["hits"] == hits + 1
    assert first[0]["competition_versions"] == ""
    version = page_cache.current()
    bump_version(competition=a, note="answers corrected")
    assert page_cache.current() > version
    after = client.get(API).json()["results"]
    assert [r["competition_versions"] for r in after] == [f"{a.slug} v1"]  # not the cached answer
    assert "v1" in client.get("/?split=tiny").content.decode()
    graded(exp, a, 0, 0, version=2)
    assert [r["competition_versions"] for r in client.get(API).json()["results"]] == [f"{a.slug} v1", f"{a.slug} v2"]


def test_grading_records_the_version_the_run_was_graded_on(alice, catalogue, tmp_path):
    answers_for(tmp_path, catalogue)
    competition = catalogue.get(slug="spaceship-titanic")
    before = submit(alice)
    tasks.grade_run.apply(args=[before.pk])
    bump_version(competition=competition, note="answers corrected")
    after = submit(alice, seed=1)
    tasks.grade_run.apply(args=[after.pk])
    reported = submit(alice, seed=2, submission=None, self_reported_score=0.5)
    runs = Run.objects.filter(pk__in=[before.pk, after.pk, reported.pk])
    versions = dict(runs.values_list("pk", "competition_version"))
    assert versions == {before.pk: 1, after.pk: 2, reported.pk: 2}
    assert Run.objects.get(pk=before.pk).status == Run.Status.GRADED


def test_runs_api_says_the_version(client, alice, catalogue):
    run = submit(alice, submission=None, self_reported_score=0.5)
    assert client.get(f"/api/runs/{run.pk}/").json()["competition_version"] == 1


def test_the_command_needs_a_note_and_keeps_the_history(client, catalogue, staff):
    with pytest.raises(CommandError, match="note"):
        call_command("bump_competition_version", "spaceship-titanic", "--note", "  ")
    with pytest.raises(CommandError, match="no competition"):
        call_command("bump_competition_version", "no-such-thing", "--note", "x")
    out = io.StringIO()
    call_command("bump_competition_version", "spaceship-titanic", "--note", "leaky split fixed", stdout=out)
    assert "version 2" in out.getvalue()
    bump_version(competition=Competition.objects.get(slug="spaceship-titanic"), note="<b>second</b> fix", user=staff)
    competition = Competition.objects.get(slug="spaceship-titanic")
    assert competition.version == 3
    assert list(CompetitionVersion.objects.filter(competition=competition).values_list("version", "note")) == [
        (2, "leaky split fixed"), (3, "<b>second</b> fix")]
    with pytest.raises(VersionError):
        bump_version(competition=competition, note="")
    competition.known_issues = "Some test images are duplicated in train."
    competition.save()
    page = client.get("/competitions/spaceship-titanic/").content.decode()
    assert "leaky split fixed" in page and "&lt;b&gt;second&lt;/b&gt; fix" in page and "<b>second</b>" not in page
    assert "Some test images are duplicated in train." in page and "version 3" in page
    detail = client.get("/api/competitions/spaceship-titanic/").json()
    assert detail["version"] == 3 and [v["version"] for v in detail["versions"]] == [2, 3]
    assert detail["known_issues"].startswith("Some test images")


def test_the_admin_action_asks_for_a_note_then_bumps(client, catalogue, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "root-password-1")
    client.force_login(admin)
    competition = Competition.objects.get(slug="spaceship-titanic")
    url = "/admin/leaderboard/competition/"
    form = {"action": "bump_version", "_selected_action": [competition.pk]}
    asked = client.post(url, form)
    assert asked.status_code == 200 and b"What changed" in asked.content
    assert Competition.objects.get(pk=competition.pk).version == 1
    client.post(url, {**form, "apply": "1", "note": "labels corrected"})
    assert Competition.objects.get(pk=competition.pk).version == 2
    assert CompetitionVersion.objects.get(competition=competition).created_by == admin


class VersionedWrites(RandomWrites):
    """RandomWrites, with version changes and runs graded on either version."""

    def upload(self) -> Run:
        run = super().upload()
        if self.rng.random() < 0.3:
            Run.objects.filter(pk=run.pk).update(competition_version=2)
        return run

    def grade(self) -> None:
        run = self.run()
        run.competition_version = self.rng.choice([1, 2, 3])
        run.status = Run.Status.GRADED
        run.save()

    def bump(self) -> None:
        bump_version(competition=self.rng.choice(self.competitions), note="changed")

    def step(self) -> None:
        self.rng.choice([super().step] * 5 + [self.bump, self.grade])()


@pytest.mark.parametrize("seed", [0, 1])
def test_random_writes_with_versions_keep_aggregates_equal_to_a_rebuild_and_to_the_runs(tiny, alice, staff, seed):
    writes = VersionedWrites(random.Random(seed), tiny, [None, alice, staff])
    for i in range(50):
        writes.step()
        if i % 10 == 9:
            assert stored_rows() == computed_rows(), f"after step {i}"
    assert SeedAggregate.objects.exclude(versions="").exists()
    assert_leaderboards_match([AnonymousUser(), staff, alice])

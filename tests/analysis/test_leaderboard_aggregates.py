"""Leaderboard aggregates: every write path keeps them equal to a rebuild, and the
leaderboard read from them equals the one computed from the runs, for every kind of viewer."""

from __future__ import annotations

import itertools
import random
from dataclasses import astuple

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard import tasks
from leaderboard.analysis import ranking, stats
from leaderboard.analysis.aggregates import maintenance
from leaderboard.analysis.aggregates.models import Audience, SeedAggregate
from leaderboard.models import Agent, Benchmark, Competition, Experiment, LanguageModel, Run, Split
from leaderboard.runs import ownership
from leaderboard.runs import submission as services
from tests.runs.test_submission import answers_for, eager, submission, submit  # noqa: F401 - eager is a fixture

FIELDS = [f.attname for f in SeedAggregate._meta.concrete_fields if f.name != "id"]
COSTS = [None, 0.1, 0.25, 1 / 3, 2.0, 7.7]


def stored_rows() -> list[tuple]:
    return sorted(SeedAggregate.objects.values_list(*FIELDS))


def computed_rows() -> list[tuple]:
    """What a rebuild would store now, computed without writing it."""
    made = maintenance.compute(Run.objects.all(), Competition.splits.through)
    return sorted(tuple(getattr(row, name) for name in FIELDS) for row in made)


def summary(rows: list[stats.ExperimentStats]) -> list[tuple]:
    return [(r.experiment.pk, r.row(), astuple(r)[1:]) for r in rows]


def assert_leaderboards_match(viewers, splits=("tiny", "lite")) -> None:
    for user, split, verified, pad in itertools.product(viewers, splits, (False, True), (False, True)):
        filters = stats.LeaderboardFilters(verified_only=verified)
        args = dict(split_slug=split, user=user, filters=filters, pad=pad, ks=(1, 2, 3))
        got, want = ranking.leaderboard(**args)[1], ranking.leaderboard_from_runs(**args)[1]
        assert summary(got) == summary(want), (user, split, verified, pad)


def experiment(agent: str, model: str = "gpt-4o") -> Experiment:
    a, _ = Agent.objects.get_or_create(name=agent, version="")
    m, _ = LanguageModel.objects.get_or_create(name=model)
    return Experiment.objects.create(agent=a, model=m, hardware="1x A10", time_limit_hours=24)


@pytest.fixture
def tiny(catalogue):
    """A 3-competition split of MLE-bench, so random runs fill seeds completely."""
    split = Split.objects.create(benchmark=Benchmark.objects.get(slug="mle-bench"), slug="tiny", name="Tiny")
    split.competitions.set(stats.resolve_split("lite").competitions.order_by("slug")[:3])
    return split


def outcome(rng: random.Random) -> dict:
    gold, silver, bronze = (rng.random() < 0.2 for _ in range(3))
    return dict(gold_medal=gold, silver_medal=silver, bronze_medal=bronze, any_medal=gold or silver or bronze,
                above_median=rng.random() < 0.5, valid_submission=rng.random() < 0.8,
                cost_usd=rng.choice(COSTS), tokens_in=rng.choice([None, 1000, 2**40]),
                tokens_out=rng.choice([None, 17]), is_demo=rng.random() < 0.1)


class RandomWrites:
    """Uploads, gradings, regrades, edits, moves, merges, deletes and split changes, at random."""

    def __init__(self, rng: random.Random, tiny: Split, users: list) -> None:
        self.rng, self.tiny, self.users = rng, tiny, users
        lite = list(stats.resolve_split("lite").competitions.order_by("slug"))
        self.competitions = lite[:5]  # 3 in `tiny`, 2 more of Lite
        self.experiments = [experiment(f"agent-{i}") for i in range(3)]

    def run(self) -> Run:
        return self.rng.choice(list(Run.objects.all())) if Run.objects.exists() else self.upload()

    def upload(self) -> Run:
        rng, owner = self.rng, self.rng.choice(self.users)
        return Run.objects.create(
            experiment=rng.choice(self.experiments), competition=rng.choice(self.competitions),
            seed=rng.randrange(3), owner=owner, is_private=owner is not None and rng.random() < 0.3,
            status=rng.choice([Run.Status.GRADED] * 3 + [Run.Status.PENDING, Run.Status.FAILED]),
            verification=rng.choice(list(Run.Verification)), **outcome(rng),
        )

    def grade(self) -> None:
        run = self.run()
        for name, value in outcome(self.rng).items():
            setattr(run, name, value)
        run.status, run.verification = Run.Status.GRADED, self.rng.choice(list(Run.Verification))
        run.save()

    def regrade(self) -> None:  # back to pending with a conditional UPDATE, then a new outcome in place
        run = self.run()
        Run.objects.filter(pk=run.pk).update(status=Run.Status.PENDING)
        if self.rng.random() < 0.7:
            Run.objects.filter(pk=run.pk).update(status=Run.Status.GRADED, **outcome(self.rng))

    def edit(self) -> None:
        run = self.run()
        services.update_run(run=run, user=self.users[-1], notes=f"note {self.rng.random()}",
                            is_private=self.rng.random() < 0.5)

    def move(self) -> None:
        runs = Run.objects.filter(pk=self.run().pk)
        if self.rng.random() < 0.5:
            runs.update(seed=self.rng.randrange(3))
        else:
            runs.update(experiment=self.rng.choice(self.experiments), competition=self.rng.choice(self.competitions))

    def merge(self) -> None:
        source, target = self.rng.sample(self.experiments, 2)
        ownership.merge_experiments(sources=[source], target=target)
        self.experiments[self.experiments.index(source)] = experiment(f"agent-{self.rng.randrange(10**6)}")

    def delete(self) -> None:
        if self.rng.random() < 0.5:
            services.delete_run(run=self.run(), user=self.users[-1])
        else:
            Run.objects.filter(seed=self.rng.randrange(3), competition=self.rng.choice(self.competitions)).delete()

    def bulk_upload(self) -> None:
        made = [self.upload() for _ in range(2)]
        copies = [Run(**{f.attname: getattr(r, f.attname) for f in Run._meta.concrete_fields if f.name != "id"})
                  for r in made]
        Run.objects.bulk_create(copies)

    def split_change(self) -> None:
        competition = self.rng.choice(self.competitions)
        if self.tiny.competitions.filter(pk=competition.pk).exists():
            self.tiny.competitions.remove(competition)
        else:
            self.tiny.competitions.add(competition)

    def step(self) -> None:
        ops = [self.upload] * 6 + [self.grade] * 2 + [self.regrade, self.regrade, self.edit, self.edit, self.move,
                                                      self.delete, self.bulk_upload, self.merge, self.split_change]
        self.rng.choice(ops)()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_writes_keep_aggregates_equal_to_a_rebuild_and_to_the_runs(tiny, alice, bob, staff, seed):
    writes = RandomWrites(random.Random(seed), tiny, [None, alice, bob, staff])
    for i in range(60):
        writes.step()
        if i % 10 == 9:
            assert stored_rows() == computed_rows(), f"after step {i}"
    assert Run.objects.filter(status=Run.Status.GRADED, is_private=True).exists()
    assert_leaderboards_match([AnonymousUser(), staff, alice, bob])
    incremental = stored_rows()
    call_command("rebuild_leaderboard_aggregates", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert stored_rows() == incremental


# --- each write path --------------------------------------------------------------------------


def audiences_of(run: Run) -> set[str]:
    return set(SeedAggregate.objects.filter(experiment_id=run.experiment_id, seed=run.seed)
               .values_list("audience", flat=True))


def test_upload_then_grading_by_the_task(alice, catalogue, tmp_path):
    answers_for(tmp_path, catalogue)
    run = submit(alice)
    assert audiences_of(run) == set()  # pending: nothing counts yet
    assert tasks.grade_run.apply(args=[run.pk]).get() == Run.Status.GRADED
    assert audiences_of(run) == set(Audience)
    row = SeedAggregate.objects.filter(experiment=run.experiment, audience=Audience.PUBLIC).first()
    assert (row.competitions, row.any_medal, row.gold_medal) == (1, 1, 1)
    assert stored_rows() == computed_rows()


def test_private_upload_counts_only_in_the_staff_rows_until_made_public(alice, catalogue, tmp_path):
    answers_for(tmp_path, catalogue)
    run = submit(alice, is_private=True)
    tasks.grade_run.apply(args=[run.pk])
    assert audiences_of(run) == {Audience.ALL, Audience.ALL_VERIFIED}
    services.update_run(run=Run.objects.get(pk=run.pk), user=alice, notes="public now", is_private=False)
    assert audiences_of(run) == set(Audience)


@pytest.mark.usefixtures("eager")
def test_regrade_after_answers_arrive(alice, catalogue, tmp_path, django_capture_on_commit_callbacks):
    from leaderboard.runs.regrading import regrade

    with django_capture_on_commit_callbacks(execute=True):
        run = submit(alice)
    assert Run.objects.get(pk=run.pk).status == Run.Status.WAITING and audiences_of(run) == set()
    answers_for(tmp_path, catalogue)
    assert regrade(run_ids=[run.pk]) == {run.pk: Run.Status.GRADED}
    assert audiences_of(run) == set(Audience)


def test_delete_removes_the_run_from_its_rows(alice, catalogue):
    run = submit(alice, self_reported_score=0.5, verification=Run.Verification.SELF_REPORTED)
    assert Run.objects.get(pk=run.pk).status == Run.Status.GRADED
    assert audiences_of(run) == {Audience.PUBLIC, Audience.ALL}
    services.delete_run(run=run, user=alice)
    assert audiences_of(run) == set()


def test_merge_and_transfer_move_the_rows(alice, bob, catalogue):
    a = submit(alice, self_reported_score=0.5, verification=Run.Verification.SELF_REPORTED)
    b = submit(bob, self_reported_score=0.5, verification=Run.Verification.SELF_REPORTED, seed=1)
    ownership.transfer_experiment(experiment=a.experiment, owner=bob)  # bob has the twin: a merge
    assert not SeedAggregate.objects.filter(experiment_id=a.experiment_id).exists()
    assert set(SeedAggregate.objects.filter(experiment_id=b.experiment_id).values_list("seed", flat=True)) == {0, 1}
    assert stored_rows() == computed_rows()


def test_updates_that_change_counted_fields_refresh_and_others_do_not(alice, catalogue, django_assert_num_queries):
    run = submit(alice, self_reported_score=0.5, verification=Run.Verification.SELF_REPORTED)
    Run.objects.filter(pk=run.pk).update(is_demo=True)  # what seed_demo does
    assert SeedAggregate.objects.filter(experiment=run.experiment, demo=1).exists()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)  # a runner's claim re-running a task
    assert audiences_of(run) == set()
    with django_assert_num_queries(1):
        Run.objects.filter(pk=run.pk).update(snapshot_timeline="[]", grading_enqueued_at=None)


def test_bulk_update_moves_runs_between_keys(alice, catalogue):
    runs = [submit(alice, self_reported_score=0.5, verification=Run.Verification.SELF_REPORTED, seed=s,
                   submission=submission(30 + s)) for s in (0, 1)]
    for run in runs:
        run.seed = 5
    Run.objects.bulk_update(runs, ["seed"])
    assert set(SeedAggregate.objects.values_list("seed", flat=True)) == {5}
    assert stored_rows() == computed_rows()


def test_split_membership_changes_follow(tiny, catalogue):
    e = experiment("split-mover")
    outside = stats.resolve_split("lite").competitions.order_by("slug")[4]
    Run.objects.create(experiment=e, competition=outside, seed=0, status=Run.Status.GRADED, any_medal=True)
    assert not SeedAggregate.objects.filter(split=tiny).exists()
    tiny.competitions.add(outside)
    assert SeedAggregate.objects.filter(split=tiny, experiment=e, any_medal=1).count() == 2  # public, all
    tiny.competitions.clear()
    assert not SeedAggregate.objects.filter(split=tiny).exists()


def test_an_owner_sees_their_private_runs_and_nobody_else_does(tiny, alice, bob, staff):
    e = experiment("secretive")
    for i, competition in enumerate(tiny.competitions.all()):
        Run.objects.create(experiment=e, competition=competition, seed=0, status=Run.Status.GRADED,
                           owner=alice, is_private=i == 0, any_medal=True)
    n_seeds = {str(u): [r.n_seeds for r in ranking.leaderboard(split_slug="tiny", user=u)[1]]
               for u in (AnonymousUser(), bob, alice, staff)}
    assert n_seeds == {"AnonymousUser": [0], "bob": [0], "alice": [1], "staff": [1]}
    assert_leaderboards_match([AnonymousUser(), bob, alice, staff], splits=("tiny",))


@pytest.mark.parametrize("viewer", ["anonymous", "staff", "owner"])
def test_query_count_does_not_grow_with_runs(tiny, alice, staff, viewer):
    user = {"anonymous": AnonymousUser(), "staff": staff, "owner": alice}[viewer]
    experiments = [experiment(f"agent-{i}") for i in range(3)]
    Run.objects.create(experiment=experiments[0], competition=tiny.competitions.first(), seed=0,
                       status=Run.Status.GRADED, owner=alice, is_private=True)
    counts = []
    for n_seeds in (2, 20):
        Run.objects.bulk_create(Run(experiment=e, competition=c, seed=s, status=Run.Status.GRADED)
                                for e in experiments for c in tiny.competitions.all() for s in range(n_seeds))
        with CaptureQueriesContext(connection) as queries:
            ranking.leaderboard(split_slug="all", user=user, pad=True, ks=(1, 2))
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 6


@pytest.mark.django_db(transaction=True)
def test_the_migration_builds_aggregates_for_existing_runs():
    from tests.site.test_migration_steps_to_files import current_schema, migrate

    old = migrate([("leaderboard", "0010_run_intake")])
    try:
        agent = old.get_model("leaderboard", "Agent").objects.create(name="a")
        model = old.get_model("leaderboard", "LanguageModel").objects.create(name="m")
        e = old.get_model("leaderboard", "Experiment").objects.create(agent=agent, model=model, hardware="h")
        # Its own benchmark and split: an earlier transactional test may have flushed the catalogue.
        benchmark = old.get_model("leaderboard", "Benchmark").objects.create(slug="migration-bench", name="b")
        split = old.get_model("leaderboard", "Split").objects.create(benchmark=benchmark, slug="low", name="low")
        competitions = [old.get_model("leaderboard", "Competition").objects.create(
            benchmark=benchmark, slug=f"migration-competition-{i}", name=f"c{i}") for i in range(2)]
        split.competitions.set(competitions)
        for seed, competition in itertools.product((0, 1), competitions):
            old.get_model("leaderboard", "Run").objects.create(
                experiment=e, competition=competition, seed=seed, status="graded", any_medal=seed == 0)
    finally:
        migrate(current_schema())
    assert SeedAggregate.objects.filter(experiment_id=e.pk, split__benchmark__slug="migration-bench",
                                        audience=Audience.PUBLIC,
                                        competitions=2).count() == 2
    assert stored_rows() == computed_rows()


def test_verified_and_demo_follow_the_counted_seeds_else_every_seed(tiny, staff):
    e = experiment("half-verified")
    competitions = list(tiny.competitions.all())
    for competition in competitions:  # seed 0 complete and verified
        Run.objects.create(experiment=e, competition=competition, seed=0, status=Run.Status.GRADED,
                           verification=Run.Verification.VERIFIED, cost_usd=0.1)
    Run.objects.create(experiment=e, competition=competitions[0], seed=1, status=Run.Status.GRADED,
                       verification=Run.Verification.SELF_REPORTED, is_demo=True, cost_usd=100.0)
    rows = {pad: ranking.leaderboard(split_slug="tiny", user=staff, pad=pad)[1][0] for pad in (False, True)}
    assert (rows[False].verified, rows[False].demo, rows[False].cost_usd) == (True, False, pytest.approx(0.1))
    assert (rows[True].verified, rows[True].demo, rows[True].cost_usd) == (False, True, pytest.approx(100.3 / 4))
    Run.objects.filter(experiment=e, seed=0).delete()  # no complete seed left: every seed shows
    row = ranking.leaderboard(split_slug="tiny", user=staff)[1][0]
    assert (row.n_seeds, row.verified, row.demo, row.cost_usd) == (0, False, True, None)
    assert_leaderboards_match([staff], splits=("tiny",))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_of_one_experiment_leave_the_rows_a_rebuild_would(catalogue):
    import threading

    from django.db import connections, transaction

    e = experiment("racer")
    competitions = list(stats.resolve_split("lite").competitions.order_by("slug")[:6])
    start, errors = threading.Barrier(4), []

    def writer(i: int) -> None:
        try:
            start.wait()
            for j, competition in enumerate(competitions):
                with transaction.atomic():
                    run = Run.objects.create(experiment=e, competition=competition, seed=j % 2,
                                             status=Run.Status.GRADED, any_medal=(i + j) % 2 == 0)
                    Run.objects.filter(pk=run.pk).update(gold_medal=True, is_private=i == 0)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Run.objects.filter(experiment=e).count() == 24
    assert stored_rows() == computed_rows()

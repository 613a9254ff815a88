"""Migration 0007: existing experiments get the owner of their runs, split where owners differ, and
runs that raced to the same content hash keep one holder of it."""

from __future__ import annotations

import pytest

from tests.site.test_migration_steps_to_files import current_schema, migrate

BEFORE = [("leaderboard", "0006_run_waiting_and_demo")]
AFTER = [("leaderboard", "0007_ownership_and_idempotence")]


@pytest.mark.django_db(transaction=True)
def test_experiments_take_their_runs_owners():
    old = migrate(BEFORE)
    user = old.get_model("auth", "User")
    alice, bob = user.objects.create(username="alice"), user.objects.create(username="bob")
    agent = old.get_model("leaderboard", "Agent").objects.create(name="a")
    model = old.get_model("leaderboard", "LanguageModel").objects.create(name="m")
    shared = old.get_model("leaderboard", "Experiment").objects.create(agent=agent, model=model, hardware="h")
    run = old.get_model("leaderboard", "Run")
    for owner, seed, content_hash in ((alice, 0, "x"), (alice, 1, "y"), (bob, 0, "z"), (None, 0, ""),
                                      (alice, 2, "x")):
        run.objects.create(experiment=shared, owner=owner, seed=seed, content_hash=content_hash)
    try:
        migrate(AFTER)
    finally:
        migrate(current_schema())

    from leaderboard.models import Experiment, Run

    owners = {e.owner_key: sorted(e.runs.values_list("seed", flat=True)) for e in Experiment.objects.all()}
    assert owners == {f"user:{alice.pk}": [0, 1, 2], f"user:{bob.pk}": [0], "": [0]}
    assert Experiment.objects.get(pk=shared.pk).owner_id == alice.pk
    assert sorted(Run.objects.exclude(content_hash="").values_list("content_hash", flat=True)) == ["x", "y", "z"]
    assert Run.objects.get(owner_id=alice.pk, seed=0).content_hash == "x"  # the oldest keeps it

"""Migration 0002 moves every run's Step rows into a trajectory file: an upgraded site loses no step."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("leaderboard", "0001_initial")]
AFTER = [("leaderboard", "0002_trajectory_files")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_step_rows_become_a_readable_trajectory_file():
    old = migrate(BEFORE)
    agent = old.get_model("leaderboard", "Agent").objects.create(name="a")
    model = old.get_model("leaderboard", "LanguageModel").objects.create(name="m")
    experiment = old.get_model("leaderboard", "Experiment").objects.create(agent=agent, model=model)
    run_model = old.get_model("leaderboard", "Run")
    step_model = old.get_model("leaderboard", "Step")
    with_steps = run_model.objects.create(experiment=experiment)
    without = run_model.objects.create(experiment=experiment)
    step_model.objects.bulk_create([
        step_model(run=with_steps, index=i, kind="code" if i % 2 else "plan", title=f"s{i}", text=f"text {i}",
                   data={"file": "a.py", "content": f"x = {i}\n"} if i % 2 else {}, t=float(i),
                   parent_index=i - 1 if i else None, score=0.5 if i == 3 else None)
        for i in range(600)
    ])
    try:
        migrate(AFTER)
    finally:
        migrate(current_schema())  # back to the current schema for the other tests

    from leaderboard.models import Run
    from leaderboard.trajectories.store import StoredTrajectory

    stored = StoredTrajectory.of(Run.objects.get(pk=with_steps.pk))
    steps = stored.complete(list(stored.steps()))
    assert [(s.index, s.kind, s.title, s.text, s.t, s.parent_index, s.score) for s in steps] == [
        (i, "code" if i % 2 else "plan", f"s{i}", f"text {i}", float(i), i - 1 if i else None, 0.5 if i == 3 else None)
        for i in range(600)
    ]
    assert steps[3].data["diff"].endswith("-x = 1\n+x = 3\n") and len(stored.blocks) == 3
    # Migration 0012 filled in each block's kinds and the counts before it, which filters read.
    assert stored.count_before(599, ["code"]) == 299 and stored.slice(290, 2, ["plan"])[0].index == 580
    assert StoredTrajectory.of(Run.objects.get(pk=without.pk)).n_steps == 0


def current_schema() -> list[tuple[str, str]]:
    """Every app's leaf migration, to migrate back to after a test went to an old state. Every app's:
    going back in leaderboard also unapplies the runner migrations that depend on it; and leaves, not
    the highest numbers, since a migration's number is not its place in the graph."""
    from django.db.migrations.loader import MigrationLoader

    return sorted(MigrationLoader(connection).graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_going_back_in_one_app_and_returning_leaves_every_app_current():
    """Going back in leaderboard unapplies the runner's migrations that depend on it: the way back must
    restore those too, or every later test runs on a runner schema without its newest columns."""
    migrate([("leaderboard", "0010_run_intake")])
    migrate(current_schema())
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []

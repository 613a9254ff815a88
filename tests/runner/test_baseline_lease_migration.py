"""Migration 0023 gives the baselines running when it was applied a lease that has run out, so the
first sweep asks for them again rather than leaving them running with no claim to expire."""

from __future__ import annotations

import pytest
from django.db import connection

from tests.site.test_migration_steps_to_files import current_schema, migrate

AFTER = ("leaderboard", "0023_baseline_lease")


@pytest.mark.django_db(transaction=True)
def test_a_baseline_running_at_upgrade_is_swept_at_once(settings, monkeypatch):
    from django.db.migrations.loader import MigrationLoader

    from leaderboard.models import ResearchTask
    from runner.research import baseline_sweep

    loader = MigrationLoader(connection)
    before = [dep for dep in loader.get_migration(*AFTER).dependencies if dep[0] == "leaderboard"]
    old = migrate(before)
    try:
        benchmark = old.get_model("leaderboard", "Benchmark").objects.create(slug="b", name="B")
        competition = old.get_model("leaderboard", "Competition").objects.create(slug="t", name="T",
                                                                                  benchmark=benchmark)
        tasks = old.get_model("leaderboard", "ResearchTask").objects
        running = tasks.create(competition=competition, entry_script="train.py", baseline_status="running")
        migrate([AFTER])
    finally:
        migrate(current_schema())  # back to the current schema for the other tests
    task = ResearchTask.objects.get(pk=running.pk)
    assert task.baseline_attempts == 1 and task.baseline_lease_expires_at is not None
    monkeypatch.setattr(baseline_sweep, "publish", lambda pk: 1)
    assert baseline_sweep.sweep_baselines()["baselines_recovered"] == 1
    assert ResearchTask.objects.get(pk=running.pk).baseline_status == ResearchTask.Baseline.PENDING

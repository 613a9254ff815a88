"""Migration runner 0008 moves how each task's sandbox ran (JobTask.sandbox and its twin
image_digest) into its run's recipe, the one place that says it now."""

from __future__ import annotations

import pytest

from tests.site.test_migration_steps_to_files import current_schema, migrate

BEFORE = [("runner", "0007_llmprice"), ("leaderboard", "0020_reproductions")]
AFTER = [("runner", "0008_reproduce"), ("leaderboard", "0020_reproductions")]


@pytest.mark.django_db(transaction=True)
def test_a_tasks_sandbox_record_becomes_its_runs_recipe():
    old = migrate(BEFORE)
    get = old.get_model
    benchmark = get("leaderboard", "Benchmark").objects.create(slug="b", name="b")
    competition = get("leaderboard", "Competition").objects.create(benchmark=benchmark, slug="c-recipe", name="c")
    experiment = get("leaderboard", "Experiment").objects.create(
        agent=get("leaderboard", "Agent").objects.create(name="a"),
        model=get("leaderboard", "LanguageModel").objects.create(name="m"))
    agent = get("runner", "AgentDefinition").objects.create(name="a-recipe")
    job = get("runner", "Job").objects.create(experiment=experiment, agent=agent, time_limit_s=60)
    runs = [get("leaderboard", "Run").objects.create(experiment=experiment, competition=competition, seed=s)
            for s in range(3)]
    tasks = get("runner", "JobTask")
    tasks.objects.create(job=job, competition=competition, seed=0, queue="q", run=runs[0], sandbox={
        "backend": "docker", "runtime": "runsc", "image": "img:1", "image_id": "sha256:aa", "runner": "box"})
    tasks.objects.create(job=job, competition=competition, seed=1, queue="q", run=runs[1], image_digest="sha256:bb")
    tasks.objects.create(job=job, competition=competition, seed=2, queue="q", run=runs[2])
    try:
        new = migrate(AFTER)
        recipes = dict(new.get_model("leaderboard", "Run").objects.filter(pk__in=[r.pk for r in runs])
                       .values_list("seed", "recipe"))
    finally:
        migrate(current_schema())
    assert recipes == {
        0: {"agent": {"image": "img:1", "image_id": "sha256:aa"},
            "sandbox": {"backend": "docker", "runtime": "runsc", "runner": "box"}},
        1: {"agent": {"image": "", "image_id": "sha256:bb"}, "sandbox": {}},
        2: {},
    }

"""Reproducing a baseline-agent experiment end to end: a loopback runner process (`manage.py runner --site
URL` with a token, the local backend; the site's grading worker grades) runs the built-in baseline's script
on a smoke competition with two seeds, then runs it again from the experiment page's Reproduce: the same
seeds give the same scores, and the badge says reproduced. The agent's definition then changes (a
6-second budget: little more than the constant submission), and its reproduction says not reproduced,
its recipes naming another agent version."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command

from leaderboard.models import Experiment, Run
from runner.jobs.services import create_job, ensure_builtin_agents
from runner.models import AgentDefinition, JobTask
from tests.job_support import WorkerProcess, needs_agent_tools, wait_until
from tests.remote_runner_support import RemoteRunner, new_token

pytestmark = [needs_agent_tools, pytest.mark.serial]
COMPETITION = "smoke-wine"


def finished(experiment: Experiment, worker: WorkerProcess, n: int) -> list[Run]:
    """The experiment's `n` runs once its tasks finished and the grading `worker` graded them."""
    wait_until(lambda: JobTask.objects.filter(job__experiment=experiment, status__in=JobTask.FINISHED).count() == n,
               300, "finished", worker)
    return wait_until(lambda: (lambda runs: runs if len(runs) == n else None)(
        list(Run.objects.filter(experiment=experiment, status=Run.Status.GRADED))), 120, "graded", worker)


def badge(client, original: Experiment, reproduction: Experiment) -> dict:
    body = client.get(f"/api/experiments/{original.pk}/reproductions/").json()
    return next(r for r in body["reproductions"] if r["experiment"] == reproduction.pk)


def test_a_baseline_experiment_reproduces_and_a_perturbed_one_does_not(live_server, transactional_db, client, alice,
                                                                       job_world, grading_worker, tmp_path):
    call_command("make_smoke_competitions", "--root", str(tmp_path / "smoke"), stdout=io.StringIO())
    alice.user_permissions.add(Permission.objects.get(codename="submit_job", content_type__app_label="runner"))
    ensure_builtin_agents()
    baseline = AgentDefinition.objects.get(name="baseline")
    AgentDefinition.objects.create(name="my-baseline", command=baseline.command, description="the baseline, mine")
    job = create_job(user=alice, agent="my-baseline", competitions=[COMPETITION], seeds=2, time_limit_minutes=2)
    original = job.experiment
    client.force_login(alice)
    worker = grading_worker
    RemoteRunner(live_server.url, new_token("loopback-reproduce"), tmp_path / "loopback")  # every task, until stopped
    try:
        scores = {r.seed: r.score for r in finished(original, worker, 2)}
        assert client.post(f"/experiments/{original.pk}/reproduce/").status_code == 302
        same = original.reproductions.get()
        assert badge(client, original, same)["badge"] in ("pending", "reproduced")
        assert {r.seed: r.score for r in finished(same, worker, 2)} == scores
        reproduced = badge(client, original, same)

        AgentDefinition.objects.filter(name="my-baseline").update(command=[*baseline.command, "--time-limit", "1"])
        assert client.post(f"/experiments/{original.pk}/reproduce/").status_code == 302
        perturbed = original.reproductions.exclude(pk=same.pk).get()
        worse = {r.seed: r.score for r in finished(perturbed, worker, 2)}
    finally:
        RemoteRunner.stop_all()
    assert reproduced["badge"] == "reproduced" and reproduced["competitions"][0]["score_test"]["mean_diff"] == 0
    not_reproduced = badge(client, original, perturbed)
    assert not_reproduced["badge"] == "not reproduced", (scores, worse)
    assert all(worse[s] < scores[s] for s in scores)
    row, = not_reproduced["competitions"]
    assert row["score_test"]["mean_diff"] == pytest.approx(sum(worse.values()) / 2 - sum(scores.values()) / 2)
    versions = {run.experiment_id: run.recipe["agent"]["version"]
                for run in Run.objects.filter(experiment__in=[original, same, perturbed])}
    assert versions[original.pk] == versions[same.pk] != versions[perturbed.pk]
    assert reproduced["changed"] == [] and not_reproduced["changed"] == ["agent.version"]
    page = client.get(f"/experiments/{original.pk}/").content.decode()
    assert "reproduction-badge reproduced" in page and "reproduction-badge not-reproduced" in page

"""Reproduce an experiment: its jobs submitted again into a new experiment that reproduces it, run
by the local backend in this process; the badge says reproduced for the same agent and seeds, not
reproduced for a perturbed agent, pending while tasks run. Who may press the button, the page and
the API; uploads cannot be reproduced."""

from __future__ import annotations

import sys

import pytest
from django.contrib.auth.models import Permission

from leaderboard.analysis import ranking
from leaderboard.models import Experiment, Run, Split
from leaderboard.trust import reproductions
from runner.jobs import reproduction
from runner.models import AgentDefinition, Job, JobTask
from tests.job_support import COMPETITION, SCRIPTED_AGENT
from tests.runner.test_jobs_execution import run_task

SETTINGS = {"steps": 2, "sleep": 0.05, "seed_errors": True}


def grant(user) -> None:
    user.user_permissions.add(Permission.objects.get(codename="submit_job", content_type__app_label="runner"))


def run_all(experiment: Experiment, runner) -> list[Run]:
    """Every queued task of the experiment's jobs, run on the loopback runner; the runs the site graded."""
    for task in JobTask.objects.filter(job__experiment=experiment, status=JobTask.Status.QUEUED).order_by("pk"):
        assert run_task(task, runner).status == JobTask.Status.SUCCEEDED
    return list(Run.objects.filter(experiment=experiment, status=Run.Status.GRADED))


@pytest.fixture
def original(alice, loopback, django_capture_on_commit_callbacks) -> Experiment:
    """Alice's scripted agent on spaceship-titanic, 3 seeds that score 1.0, 0.975 and 0.95."""
    from runner.jobs.services import create_job

    grant(alice)
    with django_capture_on_commit_callbacks(execute=False):
        job = create_job(user=alice, agent="scripted", competitions=[COMPETITION], seeds=3, time_limit_minutes=1,
                         settings=SETTINGS)
    runs = run_all(job.experiment, loopback)
    assert sorted(r.score for r in runs) == pytest.approx([0.95, 0.975, 1.0])
    return job.experiment


def reproduce(user, experiment, capture) -> Experiment:
    with capture(execute=False):
        return reproduction.reproduce(user=user, experiment=experiment)


def test_the_same_agent_and_seeds_reproduce(alice, original, loopback, django_capture_on_commit_callbacks):
    made = reproduce(alice, original, django_capture_on_commit_callbacks)
    assert made.reproduces == original and made.owner == alice and made.pk != original.pk
    job, = Job.objects.filter(experiment=made)
    first = Job.objects.get(experiment=original)
    assert (job.agent, job.seeds, job.settings, job.time_limit_s, job.cpus, job.memory_gb, job.private) == (
        first.agent, first.seeds, first.settings, first.time_limit_s, first.cpus, first.memory_gb, first.private)
    assert job.requirements == {"backend": "local"}  # as the original's recipes say it ran
    [(listed, pending)] = reproductions.reproductions_of(original, alice)
    assert listed == made and pending.badge == reproductions.PENDING and pending.unfinished_tasks == 3

    runs = run_all(made, loopback)
    assert sorted((r.seed, r.score) for r in runs) == sorted(
        Run.objects.filter(experiment=original).values_list("seed", "score"))
    [(_, assessment)] = reproductions.reproductions_of(original, alice)
    assert assessment.badge == reproductions.REPRODUCED
    row, = assessment.rows
    assert row.seeds == [0, 1, 2] and row.score_diff == 0 and row.within and assessment.changed == []
    recipes = [r.recipe for r in Run.objects.filter(experiment__in=[original, made]).order_by("seed")]
    assert len({(r["agent"]["version"], r["data"]["version"], r["seed"]) for r in recipes}) == 3  # per seed
    split = Split.objects.filter(competitions__slug=COMPETITION).first().slug
    for board in (ranking.leaderboard, ranking.leaderboard_from_runs):  # the entry once, not its re-run
        assert [row.experiment.pk for row in board(split_slug=split, user=alice)[1]] == [original.pk]


def test_a_perturbed_agent_does_not_reproduce(alice, original, loopback, django_capture_on_commit_callbacks):
    AgentDefinition.objects.filter(name="scripted").update(
        command=[sys.executable, str(SCRIPTED_AGENT), "--worse", "4"])  # 4 more wrong rows: 0.1 lower
    made = reproduce(alice, original, django_capture_on_commit_callbacks)
    run_all(made, loopback)
    [(_, assessment)] = reproductions.reproductions_of(original, alice)
    assert assessment.badge == reproductions.NOT_REPRODUCED
    row, = assessment.rows
    assert row.score_diff == pytest.approx(-0.1) and not row.within
    assert assessment.changed == ["agent.version"]  # the command changed; data, image, runtime did not
    runs = Run.objects.filter(experiment__in=[original, made])
    versions = {r.experiment_id: r.recipe["agent"]["version"] for r in runs}
    assert versions[original.pk] != versions[made.pk]  # the recipes say the agent changed


def test_who_may_reproduce(client, alice, bob, staff, original, django_capture_on_commit_callbacks):
    grant(bob)
    url = f"/experiments/{original.pk}/reproduce/"
    client.force_login(bob)
    assert client.post(url).status_code == 403
    assert client.post(f"/api/experiments/{original.pk}/reproduce/").status_code == 403
    client.logout()
    assert client.post(url).status_code == 302 and not original.reproductions.exists()  # to the login page
    assert client.post(f"/api/experiments/{original.pk}/reproduce/").status_code in (401, 403)
    for who in (alice, staff):
        client.force_login(who)
        with django_capture_on_commit_callbacks(execute=False):
            response = client.post(url)
        assert response.status_code == 302 and response["Location"] == f"/experiments/{original.pk}/"
    assert [e.owner for e in original.reproductions.order_by("pk")] == [alice, staff]
    page = client.get(f"/experiments/{original.pk}/").content.decode()
    assert 'id="reproduce-form"' in page and page.count("reproduction-badge pending") == 2
    client.force_login(bob)
    page = client.get(f"/experiments/{original.pk}/").content.decode()
    assert 'id="reproduce-form"' not in page and "reproduction-badge pending" in page


def test_the_api_submits_and_reports_the_badge(client, alice, original, loopback, django_capture_on_commit_callbacks):
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(f"/api/experiments/{original.pk}/reproduce/")
    assert response.status_code == 201, response.content
    made = Experiment.objects.get(pk=response.json()["experiment"])
    assert response.json()["jobs"] == list(made.jobs.values_list("pk", flat=True))
    body = client.get(response.json()["reproductions_url"]).json()
    assert body["reproducible"] and body["reproduces"] is None
    assert [(r["experiment"], r["badge"], r["unfinished_tasks"]) for r in body["reproductions"]] == [
        (made.pk, "pending", 3)]
    run_all(made, loopback)
    client.logout()  # public runs: anyone reads the badge
    body = client.get(f"/api/experiments/{original.pk}/reproductions/").json()
    entry, = body["reproductions"]
    assert entry["badge"] == "reproduced" and entry["unfinished_tasks"] == 0
    row, = entry["competitions"]
    assert row["competition"] == COMPETITION and row["seeds"] == [0, 1, 2] and row["within"]
    assert row["original"]["mean"] == pytest.approx(0.975) and row["score_test"]["mean_diff"] == 0
    assert entry["original_medal_rate"] == entry["reproduction_medal_rate"] and entry["changed"] == []
    back = client.get(f"/api/experiments/{made.pk}/reproductions/").json()
    assert back["reproduces"] == original.pk and back["reproductions"] == []
    page = client.get(f"/experiments/{made.pk}/").content.decode()
    assert 'id="reproduces"' in page and f'href="/experiments/{original.pk}/"' in page


def test_an_experiment_of_uploads_cannot_be_reproduced(client, alice, catalogue, django_capture_on_commit_callbacks):
    from leaderboard.runs.experiments import ExperimentSpec, get_or_create_experiment

    grant(alice)
    uploaded = get_or_create_experiment(ExperimentSpec("mine", "gpt-4o"), owner=alice)
    Run.objects.create(experiment=uploaded, competition=catalogue.get(slug=COMPETITION), task_name=COMPETITION,
                       owner=alice, origin=Run.Origin.UPLOAD, status=Run.Status.GRADED, score=0.8)
    with pytest.raises(reproduction.ReproduceRefused, match="uploaded"):
        reproduce(alice, uploaded, django_capture_on_commit_callbacks)
    client.force_login(alice)
    page = client.get(f"/experiments/{uploaded.pk}/").content.decode()
    assert 'id="not-reproducible"' in page and 'id="reproduce-form"' not in page
    assert client.get(f"/api/experiments/{uploaded.pk}/reproductions/").json()["reproducible"] is False
    response = client.post(f"/api/experiments/{uploaded.pk}/reproduce/")
    assert response.status_code == 400 and "uploaded" in response.json()["detail"]


def test_a_secret_goes_to_no_one_elses_reproduction(alice, staff, job_world, settings,
                                                   django_capture_on_commit_callbacks):
    from cryptography.fernet import Fernet

    from runner.jobs.services import create_job

    settings.RUNNER_SECRETS_FERNET_KEY = Fernet.generate_key().decode()
    with django_capture_on_commit_callbacks(execute=False):
        job = create_job(user=alice, agent="scripted", competitions=[COMPETITION], time_limit_minutes=1,
                         env={"MY_KEY": "a-long-secret-value-1234"})
    Run.objects.create(experiment=job.experiment, task_name=COMPETITION, owner=alice, origin=Run.Origin.JOB)
    with pytest.raises(reproduction.ReproduceRefused, match="only they"):
        reproduce(staff, job.experiment, django_capture_on_commit_callbacks)
    assert not job.experiment.reproductions.exists()  # nothing half made
    grant(alice)
    made = reproduce(alice, job.experiment, django_capture_on_commit_callbacks)
    from runner.host.secrets import unseal

    assert unseal(made.jobs.get().sealed_env) == {"MY_KEY": "a-long-secret-value-1234"}

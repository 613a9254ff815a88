"""A job can make its runs private, as an upload can: the runs it creates are then seen, with their
artifacts, logs, code and live log tail, by their owner and staff only. The default is the site's
MEDALBOARD_JOB_RUNS_PRIVATE_DEFAULT; the API, the form and submit_job can say either way."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command

from leaderboard.models import Artifact, Run
from runner.models import Job
from tests.job_support import COMPETITION, scripted_job
from tests.runner.test_jobs_execution import run_task


@pytest.fixture
def private_run(alice, loopback, django_capture_on_commit_callbacks) -> Run:
    from runner.jobs.services import create_job

    with django_capture_on_commit_callbacks(execute=False):
        job = create_job(user=alice, agent="scripted", competitions=[COMPETITION], time_limit_minutes=1,
                         settings={"steps": 2, "sleep": 0.1}, private=True)
    task = job.tasks.get()
    assert run_task(task, loopback).status == "succeeded"
    task.refresh_from_db()
    return task.run


def urls(run: Run) -> list[str]:
    artifacts = list(run.artifacts.order_by("pk"))
    assert {a.kind for a in artifacts} >= {Artifact.Kind.LOG, Artifact.Kind.CODE, Artifact.Kind.SUBMISSION}
    return [f"/runs/{run.pk}/", f"/runs/{run.pk}/live.json", f"/runs/{run.pk}/trajectory.jsonl",
            f"/runs/{run.pk}/grading-report.json", f"/runs/{run.pk}/status.json", f"/api/runs/{run.pk}/",
            f"/api/runs/{run.pk}/steps/", *(f"/runs/{run.pk}/files/{a.pk}/" for a in artifacts)]


def test_a_private_jobs_run_its_artifacts_and_logs_are_its_owners_only(client, alice, bob, staff, private_run):
    assert private_run.is_private and private_run.status == Run.Status.GRADED
    for who in (None, bob):
        client.logout()
        if who is not None:
            client.force_login(who)
        for url in urls(private_run):
            response = client.get(url)
            assert response.status_code in (302, 403, 404), (who, url, response.status_code)
            assert b"step 1" not in response.content
        listed = client.get("/api/runs/").json()
        assert private_run.pk not in [r["id"] for r in listed.get("results", listed)]
    for who in (alice, staff):
        client.force_login(who)
        for url in urls(private_run):
            assert client.get(url).status_code == 200, (who, url)


def test_the_default_is_the_site_setting_and_each_way_in_can_override_it(
    client, alice, job_world, settings, django_capture_on_commit_callbacks
):
    settings.MAX_ACTIVE_JOBS_PER_USER = 10
    with django_capture_on_commit_callbacks(execute=False):
        assert scripted_job(alice).private is False  # public by default, like an upload
        settings.JOB_RUNS_PRIVATE_DEFAULT = True
        assert scripted_job(alice).private is True
        alice.user_permissions.add(Permission.objects.get(codename="submit_job"))
        client.force_login(alice)
        body = {"agent": "scripted", "competitions": [COMPETITION], "time_limit_minutes": 1}
        made = client.post("/api/jobs/", {**body, "private": False}, content_type="application/json")
        assert made.status_code == 201 and made.json()["private"] is False
        assert client.post("/api/jobs/", body, content_type="application/json").json()["private"] is True
        page = client.post("/jobs/new/", {"agent": "scripted", "competitions": [COMPETITION], "seeds": 1,
                                          "time_limit_minutes": 1, "gpus": 0, "cpus": 1, "memory_gb": 1})
        assert page.status_code == 302 and Job.objects.latest("pk").private is False  # the box left unticked
        settings.JOB_RUNS_PRIVATE_DEFAULT = False
        call_command("submit_job", "--agent", "scripted", "--competition", COMPETITION, "--time-limit-minutes", "1",
                     "--user", alice.username, "--private", stdout=_Sink(), stderr=_Sink())
    assert Job.objects.latest("pk").private is True


class _Sink:
    def write(self, text: str) -> None:
        json.dumps(text)

    def flush(self) -> None:
        pass


def test_no_other_page_shows_a_private_jobs_run_to_others(client, alice, bob, private_run):
    pk = private_run.pk
    mark = b"# version 1"  # the agent's code in its first step
    others = [f"/runs/{pk}/steps/?after=0", f"/runs/{pk}/progress/", f"/compare/?runs={pk},{pk}",
              f"/compare/?runs={pk}", f"/runs/{pk}/similar/{pk + 1}/", "/runs/", "/", f"/api/runs/{pk}/steps/?limit=5"]
    client.force_login(alice)
    assert mark in client.get(f"/runs/{pk}/steps/?after=0").content  # what the owner sees, to be looked for
    for who in (None, bob):
        client.logout()
        if who is not None:
            client.force_login(who)
        for url in others:
            response = client.get(url)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            assert response.status_code < 500 and mark not in body, (who, url, response.status_code)
            assert f"/runs/{pk}/" not in body.decode(errors="replace"), (who, url)

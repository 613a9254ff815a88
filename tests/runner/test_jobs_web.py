"""The web side of jobs: who may submit, limits, refusals, secrets that never come out, cancel,
the runners list with GPU holders, and the pages."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runner.models import GpuSlot, Job, JobTask, Runner

SECRET = "sk-test-9f8e7d6c5b4a"


@pytest.fixture
def competition(catalogue, tmp_path):
    comp = catalogue.get(slug="spaceship-titanic")
    (tmp_path / "public").mkdir()
    comp.public_data_dir = str(tmp_path / "public")
    comp.save(update_fields=["public_data_dir"])
    return comp


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def job_body(**overrides) -> dict:
    return {"agent": "baseline", "competitions": ["spaceship-titanic"], "seeds": 2, "time_limit_minutes": 5,
            **overrides}


def grant(user) -> None:
    user.user_permissions.add(Permission.objects.get(codename="submit_job", content_type__app_label="runner"))


def test_staff_submit_creates_one_task_per_competition_and_seed(staff, competition):
    response = api_for(staff).post("/api/jobs/", job_body(), format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert [(t["competition"], t["seed"], t["status"]) for t in body["tasks"]] == [
        ("spaceship-titanic", 0, "queued"), ("spaceship-titanic", 1, "queued")]
    assert body["status"] == "queued" and body["time_limit_minutes"] == 5


def test_plain_user_needs_the_permission(alice, competition):
    response = api_for(alice).post("/api/jobs/", job_body(), format="json")
    assert response.status_code == 403
    assert "submit_job" in response.json()["detail"]
    assert not Job.objects.exists()
    grant(alice)
    alice = type(alice).objects.get(pk=alice.pk)  # fresh permission cache
    assert api_for(alice).post("/api/jobs/", job_body(), format="json").status_code == 201


def test_active_job_limit_per_user(alice, competition, settings):
    settings.MAX_ACTIVE_JOBS_PER_USER = 2
    grant(alice)
    client = api_for(type(alice).objects.get(pk=alice.pk))
    assert client.post("/api/jobs/", job_body(), format="json").status_code == 201
    assert client.post("/api/jobs/", job_body(), format="json").status_code == 201
    refused = client.post("/api/jobs/", job_body(), format="json")
    assert refused.status_code == 403 and "limit is 2" in refused.json()["detail"]
    JobTask.objects.update(status=JobTask.Status.SUCCEEDED)  # finished jobs do not count
    assert client.post("/api/jobs/", job_body(), format="json").status_code == 201


@pytest.mark.parametrize(("overrides", "message"), [
    ({"competitions": ["no-such-competition"]}, "unknown competition"),
    ({"time_limit_minutes": 0}, "time limit"),
    ({"time_limit_minutes": 10**9}, "time limit"),
    ({"seeds": 10_000}, "seeds"),
    ({"agent": "nobody-registered-this"}, "unknown agent"),
])
def test_refusals_say_why_and_create_nothing(staff, competition, overrides, message):
    response = api_for(staff).post("/api/jobs/", job_body(**overrides), format="json")
    assert response.status_code == 400, response.content
    assert message in json.dumps(response.json())
    assert not Job.objects.exists() and not JobTask.objects.exists()


def test_more_gpus_than_any_runner_is_refused(staff, competition):
    Runner.objects.create(name="r1", gpus=[{"index": 0, "name": "NVIDIA A10", "memory_mb": 24564, "uuid": "u0"}],
                          images=["*"])
    response = api_for(staff).post("/api/jobs/", job_body(gpus=2), format="json")
    assert response.status_code == 400 and "no runner has more than 1" in response.json()["detail"]
    assert not Job.objects.exists()


def test_secrets_are_sealed_and_never_shown(staff, competition, client):
    response = api_for(staff).post("/api/jobs/", job_body(secrets={"OPENAI_API_KEY": SECRET}), format="json")
    assert response.status_code == 201
    assert SECRET not in response.content.decode()
    assert response.json()["secret_names"] == ["OPENAI_API_KEY"]
    job = Job.objects.get()
    assert SECRET not in job.sealed_env
    assert SECRET not in api_for(staff).get(f"/api/jobs/{job.pk}/").content.decode()
    client.force_login(staff)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "OPENAI_API_KEY" in page and SECRET not in page


def test_jobs_are_private_to_their_creator_and_staff(staff, alice, competition):
    job_id = api_for(staff).post("/api/jobs/", job_body(), format="json").json()["id"]
    assert api_for(alice).get(f"/api/jobs/{job_id}/").status_code == 404
    assert api_for(alice).get("/api/jobs/").json()["results"] == []
    assert APIClient().get(f"/api/jobs/{job_id}/").status_code in (401, 403)
    assert api_for(alice).post(f"/api/jobs/{job_id}/cancel/").status_code == 404


def test_cancel_ends_queued_tasks(staff, competition):
    client = api_for(staff)
    job_id = client.post("/api/jobs/", job_body(), format="json").json()["id"]
    body = client.post(f"/api/jobs/{job_id}/cancel/").json()
    assert body["cancel_requested"] is True and body["status"] == "cancelled"
    assert {t["status"] for t in body["tasks"]} == {"cancelled"}


def test_runners_api_shows_which_task_holds_which_gpu(staff, competition):
    client = api_for(staff)
    job_id = client.post("/api/jobs/", job_body(seeds=1), format="json").json()["id"]
    task = JobTask.objects.get(job_id=job_id)
    gpus = [{"index": i, "name": "NVIDIA H100", "memory_mb": 81559, "uuid": f"u{i}", "driver": "580.159.04"}
            for i in range(2)]
    runner = Runner.objects.create(name="gpu-box", gpus=gpus, cpu_count=32, memory_gb=256)
    GpuSlot.objects.create(runner=runner, index=0, name="NVIDIA H100")
    GpuSlot.objects.create(runner=runner, index=1, name="NVIDIA H100", task=task)
    JobTask.objects.filter(pk=task.pk).update(status=JobTask.Status.RUNNING, runner=runner, gpu_indices=[1])
    (row,) = APIClient().get("/api/runners/").json()
    assert row["name"] == "gpu-box" and row["status"] == "offline"  # never sent a heartbeat
    assert row["gpus"] == [
        {"index": 0, "name": "NVIDIA H100", "memory_mb": 81559, "driver": "580.159.04", "task": None, "job": None},
        {"index": 1, "name": "NVIDIA H100", "memory_mb": 81559, "driver": "580.159.04", "task": task.pk,
         "job": job_id},
    ]
    assert row["running_tasks"] == [task.pk]
    page = APIClient().get("/runners/").content.decode()
    assert "gpu-box" in page and f"job {job_id}" in page and "(driver 580.159.04)" in page


def test_job_form_submits_and_refuses_with_the_reason(staff, competition, client):
    client.force_login(staff)
    assert client.get("/jobs/new/").status_code == 200
    refused = client.post("/jobs/new/", {"agent": "baseline", "competitions": ["spaceship-titanic"], "seeds": 1,
                                         "time_limit_minutes": 10**9, "gpus": 0, "cpus": 1, "memory_gb": 4})
    assert refused.status_code == 200 and "time limit" in refused.content.decode()
    response = client.post("/jobs/new/", {"agent": "baseline", "competitions": ["spaceship-titanic"], "seeds": 1,
                                          "time_limit_minutes": 2, "gpus": 0, "cpus": 1, "memory_gb": 4,
                                          "secrets": f"OPENAI_API_KEY={SECRET}"})
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert SECRET not in client.get(f"/jobs/{job.pk}/").content.decode()


def test_job_form_needs_the_permission(alice, client):
    client.force_login(alice)
    assert client.get("/jobs/new/").status_code == 403
    assert client.get("/jobs/").status_code == 200


def test_secrets_without_a_site_key_are_refused_with_the_reason(staff, competition, settings):
    settings.RUNNER_SECRETS_FERNET_KEY, settings.DEBUG = "", False
    response = api_for(staff).post("/api/jobs/", job_body(secrets={"OPENAI_API_KEY": SECRET}), format="json")
    assert response.status_code == 400 and "MEDALBOARD_SECRETS_KEY" in response.json()["detail"]
    assert SECRET not in response.content.decode() and not Job.objects.exists()


def test_new_accounts_may_submit_only_where_the_site_says_so(db, django_user_model, settings):
    from runner.jobs.access import can_submit_jobs

    assert not can_submit_jobs(django_user_model.objects.create_user("plain", "p@example.org", "pw-123456-x"))
    settings.NEW_USERS_CAN_SUBMIT_JOBS = True
    user = django_user_model.objects.create_user("newcomer", "n@example.org", "pw-123456-x")
    assert can_submit_jobs(django_user_model.objects.get(pk=user.pk))


@pytest.mark.parametrize(("run_status", "done"), [("running", False), ("graded", True), ("waiting", True)])
def test_live_json_is_done_once_the_run_has_an_outcome(staff, competition, client, run_status, done):
    from leaderboard.models import Run

    job_id = api_for(staff).post("/api/jobs/", job_body(seeds=1), format="json").json()["id"]
    task = JobTask.objects.get(job_id=job_id)
    run = Run.objects.create(experiment=task.job.experiment, competition=competition, task_name="spaceship-titanic",
                             origin=Run.Origin.JOB, status=run_status)
    finished = JobTask.Status.RUNNING if run_status == "running" else JobTask.Status.SUCCEEDED
    JobTask.objects.filter(pk=task.pk).update(run=run, status=finished, log_tail="step 1 <script>x</script>")
    body = client.get(f"/runs/{run.pk}/live.json").json()
    assert body["done"] is done and body["task_status"] == finished and body["job"] == job_id
    assert body["log_tail"].endswith("<script>x</script>")  # JSON; the page writes it with textContent

"""Odd API input is a 4xx with the reason: nesting, numbers and strings past what a column holds,
query parameters past 64 bits, path ids that are not integers. Nothing is created by a refusal."""

from __future__ import annotations

import json

import pytest

from runner.models import Job
from tests.api.test_runs import token_client
from tests.web.test_replay_page import make_run

JOB = {"agent": "baseline", "competitions": ["spaceship-titanic"], "seeds": 1, "time_limit_minutes": 5}


@pytest.fixture
def submitter(alice, catalogue, tmp_path):
    """alice may submit jobs, and the competitions have public data: a request is refused for its numbers."""
    from django.contrib.auth.models import Permission

    from leaderboard.models import Competition

    alice.user_permissions.add(Permission.objects.get(codename="submit_job"))
    Competition.objects.update(public_data_dir=str(tmp_path))
    return token_client(alice)


def post_job(client, body: str | dict):
    raw = body if isinstance(body, str) else json.dumps(body)
    return client.post("/api/jobs/", raw, content_type="application/json")


def test_json_nested_past_the_recursion_limit_is_a_400(submitter, catalogue):
    response = post_job(submitter, '{"agent": "baseline", "settings": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert response.status_code == 400 and "nested deeper" in response.json()["detail"]
    assert not Job.objects.exists()


def test_settings_nested_past_the_depth_limit_are_a_400(submitter, catalogue):
    nested: dict = {}
    for _ in range(40):
        nested = {"a": nested}
    response = post_job(submitter, {**JOB, "settings": nested})
    assert response.status_code == 400 and "nested deeper" in str(response.json())


def test_settings_larger_than_their_bound_are_a_400(submitter, catalogue):
    response = post_job(submitter, {**JOB, "settings": {"prompt": "x" * 100_000}})
    assert response.status_code == 400 and "settings" in response.json()


@pytest.mark.parametrize("number", ["1e999", "-1e999", "Infinity", "NaN", str(2**64)])
def test_numbers_no_column_holds_are_a_400(submitter, catalogue, number):
    body = json.dumps(JOB).replace('"time_limit_minutes": 5', f'"time_limit_minutes": {number}')
    response = post_job(submitter, body)
    assert response.status_code == 400, response.content
    assert not Job.objects.exists()


@pytest.mark.parametrize("field, value", [
    ("seeds", 2**31), ("gpus", 2**40), ("cpus", 1e300), ("memory_gb", 1e300),
    ("model", "m" * 201), ("gpu_type", "g" * 101), ("split", "s" * 101), ("agent", "a" * 101),
    ("competitions", ["c" * 201]), ("network", "n" * 129),
])
def test_job_fields_past_their_columns_are_a_400(submitter, catalogue, field, value):
    response = post_job(submitter, {**JOB, field: value})
    assert response.status_code == 400 and field in response.json(), response.content
    assert not Job.objects.exists()


def test_a_time_limit_past_the_maximum_is_a_400(submitter, catalogue):
    response = post_job(submitter, {**JOB, "time_limit_minutes": 1e300})
    assert response.status_code == 400 and "time limit" in response.json()["detail"]
    assert not Job.objects.exists()


def test_a_json_body_past_the_size_limit_is_a_400(submitter, catalogue, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = post_job(submitter, {**JOB, "model": "x" * 2000})
    assert response.status_code == 400
    assert not Job.objects.exists()


@pytest.mark.parametrize("job_id", ["false", "null", "text", "1.5", "-1", str(2**70)])
def test_a_job_id_that_is_no_job_is_a_404(submitter, catalogue, job_id):
    assert submitter.post(f"/api/jobs/{job_id}/cancel/").status_code == 404
    assert submitter.get(f"/api/jobs/{job_id}/").status_code == 404


@pytest.mark.parametrize("run_id", ["false", "null", str(2**70)])
def test_a_run_id_that_is_no_run_is_a_404(client, catalogue, run_id):
    assert client.get(f"/api/runs/{run_id}/").status_code == 404


@pytest.mark.parametrize("query", [f"offset={2**64}", "offset=" + "9" * 5000, "offset=-1", "offset=abc", "limit=x",
                                   "limit=-5", "offset=%C2%B2"])
def test_paging_parameters_out_of_range_are_a_400(client, catalogue, query):
    response = client.get(f"/api/competitions/?{query}")
    assert response.status_code == 400 and query.split("=")[0] in response.json()


@pytest.mark.parametrize("limit", ["1000000", str(2**64), "9" * 5000])
def test_a_limit_above_the_maximum_is_capped(client, catalogue, limit):
    response = client.get(f"/api/competitions/?limit={limit}&offset=1")
    assert response.status_code == 200 and len(response.json()["results"]) == catalogue.count() - 1


@pytest.mark.parametrize("query", [f"page={2**64}", f"around={2**64}", f"cursor={2**64}&q=x", "q=" + "x" * 2000])
def test_step_parameters_out_of_range_are_a_400(client, catalogue, query):
    run = make_run()
    assert client.get(f"/api/runs/{run.pk}/steps/?{query}").status_code == 400


def test_a_crafted_run_cursor_is_a_404(client, catalogue):
    import base64

    cursor = base64.b64encode(b"p=not-a-time&o=0").decode()
    assert client.get(f"/api/runs/?cursor={cursor}").status_code == 404


@pytest.mark.parametrize("field, value", [("cpus", 1e300), ("memory_gb", 1e300), ("memory_gb", float("inf")),
                                          ("cpus", 10**6)])
def test_every_door_to_create_job_refuses_numbers_that_overflow_in_the_worker(alice, catalogue, tmp_path, field,
                                                                              value):
    """The form and `submit_job` reach create_job without the API's serializer: memory_gb * 2^30 must
    stay an integer the sandbox can take, cpus an integer column."""
    from leaderboard.models import Competition
    from runner.jobs.services import JobError, create_job

    Competition.objects.update(public_data_dir=str(tmp_path))
    with pytest.raises(JobError, match=field):
        create_job(user=alice, **{**JOB, field: value})
    assert not Job.objects.exists()


@pytest.mark.parametrize("field, value", [("memory_gb", 1e300), ("time_limit_hours", 1e300)])
def test_run_budgets_past_their_bounds_are_a_400(alice, catalogue, field, value):
    from leaderboard.models import Run
    from tests.api.test_runs import payload

    response = token_client(alice).post("/api/runs/", payload(**{field: value}), format="multipart")
    assert response.status_code == 400 and field in response.json()
    assert not Run.objects.exists()


@pytest.mark.parametrize("number", [float("inf"), float("nan")])
def test_create_job_refuses_settings_that_are_not_json(alice, catalogue, tmp_path, number):
    from leaderboard.models import Competition
    from runner.jobs.services import JobError, create_job

    Competition.objects.update(public_data_dir=str(tmp_path))
    with pytest.raises(JobError, match="finite"):
        create_job(user=alice, **{**JOB, "settings": {"temperature": number}})
    assert not Job.objects.exists()


@pytest.mark.parametrize("path", ["/api/scaling/time/", "/api/scaling/pass-at-k/", "/api/scaling/hardware/"])
@pytest.mark.parametrize("ids", ["%C2%B2", "%D9%A3", "1,x", "9" * 30, "9" * 5000, str(2**63)])
def test_experiment_ids_that_are_no_ids_are_a_400(client, catalogue, path, ids):
    """A Unicode digit ('²', Arabic-Indic three) passes str.isdigit() and fails int(); an id past 64
    bits overflows SQLite: both were 500s."""
    response = client.get(f"{path}?experiment={ids}")
    assert response.status_code == 400 and "experiment" in response.json()


@pytest.mark.parametrize("url", ["/compare/?runs=%C2%B2,1", "/compare/?runs=1," + "9" * 25,
                                 "/runs/1/steps/?start=" + "9" * 30])
def test_page_parameters_that_are_no_ids_are_not_a_server_error(client, catalogue, url):
    make_run()
    assert client.get(url).status_code < 500


def test_a_content_length_of_unicode_digits_is_a_400(client):
    response = client.generic("POST", "/api/runs/", b"", CONTENT_LENGTH="\xb2")
    assert response.status_code == 400


@pytest.mark.parametrize("query", ["q=" + "x" * 201, "split=" + "s" * 101])
def test_competition_filters_longer_than_a_column_are_a_400(client, catalogue, query):
    response = client.get(f"/api/competitions/?{query}")
    assert response.status_code == 400 and query.split("=")[0] in response.json()

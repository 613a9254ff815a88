"""The runner API's rules, request by request: a runner reads and writes only its own task (403),
a runner whose lease was handed on writes nothing (409, fenced), every write sent twice changes
nothing twice, a revoked token is refused and its tasks are back in the queue, and the API is in
the OpenAPI schema."""

from __future__ import annotations

import hashlib
import io
from datetime import timedelta

from django.utils import timezone
from rest_framework.test import APIClient

from leaderboard.models import Artifact, Run
from runner.api_v1 import tokens
from runner.jobs import sweep
from runner.models import JobTask, RemoteUpload
from tests.job_support import needs_agent_tools

pytestmark = needs_agent_tools
API = "/api/runner/v1/"


def runner_client(name: str) -> APIClient:
    _, token = tokens.issue(name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Runner {token}")
    client.post(
        API + "register/", {"cpu_count": 4, "memory_gb": 16, "images": ["*"], "backend": "local"}, format="json"
    )
    return client


def put(client: APIClient, claim: dict, key: str, content: bytes, offset: int, total: bytes, name: str):
    return client.generic(
        "PUT",
        f"{API}tasks/{claim['task']}/uploads/{key}/",
        content[offset:],
        content_type="application/octet-stream",
        HTTP_X_LEASE_OWNER=claim["lease"]["owner"],
        HTTP_X_LEASE_ATTEMPT=str(claim["lease"]["attempt"]),
        HTTP_UPLOAD_OFFSET=str(offset),
        HTTP_UPLOAD_LENGTH=str(len(total)),
        HTTP_UPLOAD_SHA256=hashlib.sha256(total).hexdigest(),
        HTTP_UPLOAD_NAME=name,
        HTTP_UPLOAD_KIND="log",
    )


def test_the_claim_carries_the_task_its_lease_and_its_secrets_only_there(claimed):
    _, claim, job = claimed
    task = job.tasks.get()
    assert claim["task"] == task.pk and claim["lease"]["attempt"] == 1
    assert JobTask.objects.get(pk=task.pk).status == JobTask.Status.RUNNING
    assert {f["path"] for f in claim["data"]["files"]} == {"sample_submission.csv", "description.md"}
    assert claim["sandbox"]["env"]["COMPETITION_ID"] == "spaceship-titanic"


def test_another_runners_task_is_403_for_every_read_and_write(claimed):
    _, claim, _ = claimed
    other = runner_client("remote-b")
    task = claim["task"]
    for path, body in (
        ("lease/", {}),
        ("steps/", {"agent": [[1, "{}"]]}),
        ("finish/", {"status": "succeeded"}),
        ("snapshots/", {"key": "x", "seconds": 1}),
    ):
        answer = other.post(f"{API}tasks/{task}/{path}", {"lease": claim["lease"], **body}, format="json")
        assert answer.status_code == 403, (path, answer.content)
    assert put(other, claim, "out-1", b"abc", 0, b"abc", "logs/x").status_code == 403
    sha = claim["data"]["files"][0]["sha256"]
    assert other.get(f"{API}tasks/{task}/data/{sha}/").status_code == 403
    assert not RemoteUpload.objects.exists()
    assert JobTask.objects.get(pk=task).log_tail == ""


def test_a_runner_whose_lease_was_handed_on_writes_nothing(claimed, settings):
    client, claim, job = claimed
    task = job.tasks.get()
    first = {"lease": claim["lease"], "agent": [[1, '{"kind": "plan"}']]}
    assert client.post(f"{API}tasks/{task.pk}/steps/", first, format="json").status_code == 200
    assert any(settings.RUNNER_UPLOAD_DIR.glob(f"task-{task.pk}-a1-*"))  # staged lines of the first attempt
    JobTask.objects.filter(pk=task.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    sweep.sweep_tasks()
    assert JobTask.objects.get(pk=task.pk).status == JobTask.Status.QUEUED
    again = client.post(API + "claim/", {"wait_s": 0}, format="json").json()
    assert again["lease"]["attempt"] == 2
    stale = {"lease": claim["lease"]}
    answer = client.post(f"{API}tasks/{task.pk}/steps/", {**stale, "agent": [[1, '{"kind": "plan"}']]}, format="json")
    assert answer.status_code == 409 and answer.json()["fenced"]
    assert (
        client.post(f"{API}tasks/{task.pk}/finish/", {**stale, "status": "succeeded"}, format="json").status_code == 409
    )
    assert put(client, claim, "out-1", b"abc", 0, b"abc", "logs/x").status_code == 409
    assert Run.objects.get(pk=again["run"]).n_steps == 0
    assert not any(settings.RUNNER_UPLOAD_DIR.glob(f"task-{task.pk}-a1-*"))
    assert JobTask.objects.get(pk=task.pk).status == JobTask.Status.RUNNING


def test_steps_sent_twice_are_stored_once(claimed):
    client, claim, _ = claimed
    lines = [[n, f'{{"kind": "plan", "title": "step {n}"}}'] for n in (1, 2, 3)]
    url = f"{API}tasks/{claim['task']}/steps/"
    for _ in range(2):
        assert client.post(url, {"lease": claim["lease"], "agent": lines}, format="json").status_code == 200
    client.post(url, {"lease": claim["lease"], "agent": [*lines, [4, '{"kind": "plan"}']]}, format="json")
    assert Run.objects.get(pk=claim["run"]).n_steps == 4


def test_an_upload_cut_mid_way_resumes_and_the_finish_sent_twice_stores_once(claimed):
    client, claim, _ = claimed
    content = b"id,x\n" + b"".join(b"%d,1\n" % i for i in range(5000))
    url = f"{API}tasks/{claim['task']}/uploads/out-00000/"
    assert put(client, claim, "out-00000", content[:10_000], 0, content, "logs/big.csv").json()["received"] == 10_000
    # the connection dropped after the site took the chunk: the runner sends from an older offset again
    again = put(client, claim, "out-00000", content[:20_000], 5_000, content, "logs/big.csv").json()
    assert again == {"received": 20_000, "complete": False}
    gap = put(client, claim, "out-00000", content, 30_000, content, "logs/big.csv")
    assert gap.status_code == 409 and gap.json()["received"] == 20_000
    done = put(client, claim, "out-00000", content, 20_000, content, "logs/big.csv").json()
    assert done == {"received": len(content), "complete": True}
    assert client.get(
        url, HTTP_X_LEASE_OWNER=claim["lease"]["owner"], HTTP_X_LEASE_ATTEMPT=str(claim["lease"]["attempt"])
    ).json()["complete"]
    report = {"lease": claim["lease"], "status": "succeeded", "files": ["out-00000"]}
    first = client.post(f"{API}tasks/{claim['task']}/finish/", report, format="json")
    second = client.post(f"{API}tasks/{claim['task']}/finish/", report, format="json")
    assert first.status_code == second.status_code == 200 and first.json() == second.json()
    stored = Artifact.objects.get(run_id=claim["run"], name="logs/big.csv")
    assert stored.file.read() == content
    assert Artifact.objects.filter(run_id=claim["run"]).count() == 1


def test_a_runner_cannot_upload_a_grading_report(claimed):
    client, claim, _ = claimed
    answer = client.generic(
        "PUT",
        f"{API}tasks/{claim['task']}/uploads/out-1/",
        b"{}",
        content_type="application/octet-stream",
        HTTP_X_LEASE_OWNER=claim["lease"]["owner"],
        HTTP_X_LEASE_ATTEMPT=str(claim["lease"]["attempt"]),
        HTTP_UPLOAD_OFFSET="0",
        HTTP_UPLOAD_LENGTH="2",
        HTTP_UPLOAD_SHA256=hashlib.sha256(b"{}").hexdigest(),
        HTTP_UPLOAD_NAME="report.json",
        HTTP_UPLOAD_KIND="report",
    )
    assert answer.status_code == 400 and not RemoteUpload.objects.exists()


def test_an_upload_whose_bytes_do_not_match_its_hash_is_dropped(claimed):
    client, claim, _ = claimed
    wrong = put(client, claim, "out-1", b"abd", 0, b"abc", "logs/x")
    assert wrong.status_code == 409 and wrong.json()["received"] == 0
    assert not RemoteUpload.objects.get(key="out-1").complete


def test_a_revoked_token_is_refused_and_its_task_goes_back_to_the_queue(claimed):
    client, claim, job = claimed
    back = tokens.revoke(JobTask.objects.get(pk=claim["task"]).runner)
    assert back == 1
    task = JobTask.objects.get(pk=claim["task"])
    assert task.status == JobTask.Status.QUEUED and task.lease_owner == "" and task.attempts == 0
    assert client.post(API + "claim/", {"wait_s": 0}, format="json").status_code == 401
    assert client.post(f"{API}tasks/{task.pk}/lease/", {"lease": claim["lease"]}, format="json").status_code == 401


def test_create_runner_shows_the_token_once_and_keeps_its_hash(db):
    from django.core.management import call_command

    from runner.models import Runner

    out = io.StringIO()
    call_command("create_runner", "remote-c", stdout=out, stderr=io.StringIO())
    token = out.getvalue().strip().splitlines()[-1]
    runner = Runner.objects.get(name="remote-c")
    assert token.startswith("mbr_") and runner.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(Runner.objects.filter(name="remote-c").values().get())


def test_the_runner_api_is_in_the_openapi_schema(client, db):
    schema = client.get("/api/schema/").content.decode()
    for path in (
        "/api/runner/v1/claim/",
        "/api/runner/v1/tasks/{id}/uploads/{key}/",
        "/api/runner/v1/tasks/{id}/finish/",
    ):
        assert path in schema


def llm_claim(user, django_capture_on_commit_callbacks, key: str) -> tuple[APIClient, dict]:
    from decimal import Decimal

    from runner.jobs.services import create_job
    from runner.models import LlmPrice

    LlmPrice.objects.create(pattern="gpt-4o*", input_usd_per_mtok=Decimal("2.5"), output_usd_per_mtok=Decimal("10"))
    with django_capture_on_commit_callbacks(execute=False):
        create_job(
            user=user,
            agent="scripted",
            competitions=["spaceship-titanic"],
            time_limit_minutes=1,
            settings={"llm_max_calls": 3, "steps": 1},
            env={"OPENAI_API_KEY": key},
        )
    client = runner_client("remote-d")
    answer = client.post(API + "claim/", {"wait_s": 0}, format="json")
    assert answer.status_code == 200, answer.content
    return client, answer.json()


def test_a_job_holding_an_llm_key_goes_to_a_remote_runner_with_its_gateways_configuration(
    alice, job_world, django_capture_on_commit_callbacks, settings
):
    settings.JOB_BUDGET_GRACE_S = 2.5
    _, claim = llm_claim(alice, django_capture_on_commit_callbacks, "sk-test-for-the-runners-gateway")
    assert claim["sandbox"]["env"]["OPENAI_API_KEY"] == "sk-test-for-the-runners-gateway"  # its gateway keeps it
    assert "sk-test-for-the-runners-gateway" in claim["redact"]
    assert claim["llm"] == {"settings": {"llm_max_calls": 3}, "prices": {"gpt-4o*": [2.5, 10.0]}, "budget_grace_s": 2.5}


def test_a_remote_runners_meter_report_is_read_as_untrusted(alice, job_world, django_capture_on_commit_callbacks):
    """Counts past the run's columns, a negative cost, a note quoting the key and a flood of model names
    are each what the in-process reading makes of them: unknown, unknown, redacted, bounded."""
    key = "sk-test-quoted-by-a-runner-0123456789"
    client, claim = llm_claim(alice, django_capture_on_commit_callbacks, key)
    report = {
        "tokens_in": 1e30,  # past the column (the site's JSON parser refuses integers past 64 bits)
        "tokens_out": 14,
        "cost_usd": -1.0,
        "calls": 2,
        "unpriced_calls": 0,
        "status": f"upstream said {key} " + "x" * 5000,
        "budget_refused": "this job's limit of 3 LLM calls is reached",
        "models": {"gpt-4o": 2, **{f"m{n}": 1 for n in range(500)}, "": 9, "bad": "many"},
    }
    body = {"lease": claim["lease"], "status": "succeeded", "files": [], "llm": report}
    with django_capture_on_commit_callbacks(execute=False):
        answer = client.post(f"{API}tasks/{claim['task']}/finish/", body, format="json")
        assert answer.status_code == 200, answer.content
    run = Run.objects.get(pk=claim["run"])
    assert (run.tokens_in, run.tokens_out, run.cost_usd, run.usage_metered) == (None, 14, None, True)
    task = JobTask.objects.get(pk=claim["task"])
    assert key not in task.error and key not in str(run.import_warnings)
    assert "refused calls past the job's budget: this job's limit of 3 LLM calls is reached" in task.error
    assert len(task.error) < 1200
    assert "gpt-4o (2 calls)" in str(run.import_warnings)  # the job named no model: its calls name it
    assert run.experiment.model.name.startswith("gpt-4o + m0") and len(run.experiment.model.name) <= 200

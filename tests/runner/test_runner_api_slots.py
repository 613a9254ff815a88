"""A runner attached over the runner API holds at most as many leases as the slots it registered with:
a claim past them is answered with nothing (the task stays queued) until a slot frees; the slots are
checked as untrusted input; concurrent tasks get disjoint GPUs, and a task whose GPUs are all held
waits in the queue instead of failing."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from runner.api_v1 import tokens
from runner.jobs.services import create_job
from runner.models import JobTask, Runner
from tests.job_support import COMPETITION, needs_agent_tools, scripted_job

pytestmark = needs_agent_tools
API = "/api/runner/v1/"
GPUS = [{"index": 0, "name": "NVIDIA A10"}, {"index": 1, "name": "NVIDIA A10"}]


def registered(name: str, **hardware) -> tuple[APIClient, object]:
    _, token = tokens.issue(name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Runner {token}")
    body = {"cpu_count": 4, "memory_gb": 16, "images": ["*"], "backend": "local", **hardware}
    return client, client.post(API + "register/", body, format="json")


def claim(client: APIClient):
    return client.post(API + "claim/", {"wait_s": 0}, format="json")


@pytest.fixture
def queued(alice, job_world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):  # nothing reaches a broker
        return scripted_job(alice, seeds=3)


@pytest.mark.parametrize("slots", [1, 2])
def test_a_claim_past_the_registered_slots_gets_nothing_until_one_frees(queued, slots):
    client, answer = registered("slotted", slots=slots)
    assert answer.status_code == 200 and Runner.objects.get(name="slotted").concurrency == slots
    held = [claim(client) for _ in range(slots)]
    assert [a.status_code for a in held] == [200] * slots
    assert claim(client).status_code == 204  # every slot holds a lease
    assert queued.tasks.filter(status=JobTask.Status.RUNNING).count() == slots
    assert queued.tasks.filter(status=JobTask.Status.QUEUED).count() == 3 - slots
    first = held[0].json()
    ended = client.post(
        f"{API}tasks/{first['task']}/finish/", {"lease": first["lease"], "status": "failed"}, format="json"
    )
    assert ended.status_code == 200, ended.content
    assert claim(client).status_code == 200  # the slot it held is free again


def test_a_runner_that_does_not_say_its_slots_runs_one_task_at_a_time(queued):
    client, _ = registered("unsaid", slots=3)
    client.post(API + "register/", {"cpu_count": 4, "images": ["*"], "backend": "local"}, format="json")
    assert Runner.objects.get(name="unsaid").concurrency == 1
    assert claim(client).status_code == 200
    assert claim(client).status_code == 204


@pytest.mark.parametrize("slots", [0, 65, -1, "2", 2.5, True, None, [2]])
def test_slots_outside_one_to_sixty_four_are_refused(db, slots):
    _, answer = registered("bad-slots", slots=slots)
    assert answer.status_code == 400 and "slots" in answer.json()["detail"]
    assert Runner.objects.get(name="bad-slots").concurrency == 1  # nothing of the register was kept


def test_concurrent_tasks_get_disjoint_gpus_and_one_whose_gpus_are_held_waits_queued(
    alice, job_world, django_capture_on_commit_callbacks
):
    client, _ = registered("gpu-box", slots=3, gpus=GPUS)  # first: a job asks for GPUs some runner has
    with django_capture_on_commit_callbacks(execute=False):
        one_gpu = create_job(
            user=alice, agent="scripted", competitions=[COMPETITION], seeds=2, time_limit_minutes=1, gpus=1
        )
        both_gpus = create_job(
            user=alice, agent="scripted", competitions=[COMPETITION], seeds=1, time_limit_minutes=1, gpus=2
        )
    answers = [claim(client) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 204]
    gpus = [a.json()["sandbox"]["gpus"] for a in answers[:2]]
    assert sorted(gpus) == [[0], [1]]
    assert {a.json()["task"] for a in answers[:2]} == set(one_gpu.tasks.values_list("pk", flat=True))
    task = both_gpus.tasks.get()
    assert task.status == JobTask.Status.QUEUED and task.error == "" and task.attempts == 0  # it waits, unfailed
    for a in answers[:2]:
        body = {"lease": a.json()["lease"], "status": "failed"}
        assert client.post(f"{API}tasks/{a.json()['task']}/finish/", body, format="json").status_code == 200
    last = claim(client)
    assert last.status_code == 200 and last.json()["task"] == task.pk and last.json()["sandbox"]["gpus"] == [0, 1]

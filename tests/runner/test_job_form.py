"""The job form offers what exists (the registered agents with their descriptions, the networks the
runners offer) while the API keeps taking names; pages that can hold a secret are never cached, and
a form shown again after an error does not carry the secrets typed into it."""

from __future__ import annotations

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from leaderboard.models import Run
from runner.models import AgentDefinition, Job, Runner
from tests.runner import test_jobs_web
from tests.runner.test_jobs_web import SECRET

competition = test_jobs_web.competition  # the fixture: spaceship-titanic with public data

BODY = {"competitions": ["spaceship-titanic"], "seeds": 1, "time_limit_minutes": 2, "gpus": 0, "cpus": 1,
        "memory_gb": 4}


@pytest.fixture
def offered(db):
    AgentDefinition.objects.create(name="aide", image="", command=["aide"],
                                   description="AIDE: tree search over solution drafts, scored by validation.")
    Runner.objects.create(name="r1", images=["*"], last_heartbeat=timezone.now(), networks=["llm-egress"])
    Runner.objects.create(name="r2", images=["*"], last_heartbeat=timezone.now(), networks=["proxy", "host"])


def test_the_form_offers_registered_agents_and_the_networks_runners_offer(staff, competition, offered, client):
    client.force_login(staff)
    form = client.get("/jobs/new/").context["form"]
    agents = dict(form.fields["agent"].choices)
    assert agents["aide"] == "aide: AIDE: tree search over solution drafts, scored by validation."
    assert agents["baseline"].startswith("baseline: Time-budgeted scikit-learn")
    assert list(form.fields["network"].choices) == [("", "No network"), ("llm-egress", "llm-egress"),
                                                    ("proxy", "proxy")]  # never host, even if a row says so
    made = client.post("/jobs/new/", {**BODY, "agent": "aide", "network": "proxy"})
    assert made.status_code == 302 and Job.objects.get().network == "proxy"
    refused = client.post("/jobs/new/", {**BODY, "agent": "aide", "network": "host"})
    assert refused.status_code == 200 and "host" in refused.context["form"].errors["network"][0]
    refused = client.post("/jobs/new/", {**BODY, "agent": "not-registered"})
    assert refused.status_code == 200 and "agent" in refused.context["form"].errors
    assert Job.objects.count() == 1


def test_the_api_still_takes_agent_and_network_names(staff, competition, offered):
    api = APIClient()
    api.force_authenticate(staff)
    made = api.post("/api/jobs/", {**BODY, "agent": "aide", "network": "llm-egress"}, format="json")
    assert made.status_code == 201 and made.json()["network"] == "llm-egress"
    refused = api.post("/api/jobs/", {**BODY, "agent": "nobody", "network": "llm-egress"}, format="json")
    assert refused.status_code == 400 and "unknown agent 'nobody'" in refused.json()["detail"]


def test_pages_that_can_hold_a_secret_are_never_cached_nor_echo_it(staff, competition, client):
    client.force_login(staff)
    refused = client.post("/jobs/new/", {**BODY, "agent": "baseline", "time_limit_minutes": 10**9,
                                         "secrets": f"OPENAI_API_KEY={SECRET}"})
    assert refused.status_code == 200 and "time limit" in refused.content.decode()
    assert SECRET not in refused.content.decode()
    made = client.post("/jobs/new/", {**BODY, "agent": "baseline", "secrets": f"OPENAI_API_KEY={SECRET}"})
    job = Job.objects.get()
    run = Run.objects.create(experiment=job.experiment, competition=competition, task_name=competition.slug,
                             origin=Run.Origin.JOB, status=Run.Status.RUNNING)
    job.tasks.update(run=run, log_tail="the agent printed its key")
    run_live = f"/runs/{run.pk}/live.json"
    for response in (client.get("/jobs/new/"), refused, client.get(f"/jobs/{job.pk}/"), client.get("/api/jobs/"),
                     client.get(f"/api/jobs/{job.pk}/"), made, client.get(run_live)):
        assert "no-store" in response.get("Cache-Control", ""), response

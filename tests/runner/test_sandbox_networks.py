"""A sandbox joins only a network its runner's operator listed (MEDALBOARD_SANDBOX_NETWORKS), and never
one that shares the host's or reaches it (host, bridge, default, none, container:..., any colon):
refused when the job is created, when the runner starts, and on the runner right before the start."""

from __future__ import annotations

import os
import re

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from runner.backends.local import LocalBackend
from runner.host.hardware import Hardware
from runner.host.networks import NetworkRefused, check_sandbox_network
from runner.jobs import registry
from runner.jobs.services import JobError, create_job
from runner.models import Job, Runner
from tests.job_support import COMPETITION, needs_agent_tools
from tests.runner import test_jobs_docker
from tests.runner.test_jobs_create import make, runner

docker_agent = test_jobs_docker.docker_agent  # the fixture: the agent image and the scripted agent inline

NEVER = ["host", "bridge", "none", "default", "HOST", "container:medalboard-web", "a:b", "host:", "host\n", "egress\n",
         " host", "container:" + "f" * 64]


@pytest.fixture
def public_data(db, tmp_path):
    from leaderboard.models import Competition

    Competition.objects.update(public_data_dir=str(tmp_path))


@pytest.mark.parametrize("name", NEVER)
def test_a_job_never_gets_a_network_that_shares_or_reaches_the_host(alice, catalogue, public_data, name):
    runner(networks=[name, "egress"])  # even a runner row that lists it
    with pytest.raises(JobError, match="the network '"):
        make(alice, network=name)
    assert Job.objects.count() == 0


def test_a_job_gets_only_a_network_some_runner_offers(
    alice, catalogue, public_data, django_capture_on_commit_callbacks
):
    with pytest.raises(JobError, match=r"the network 'egress' is not one any runner offers sandboxes \(offered: none;"):
        make(alice, network="egress")
    runner("a", networks=["llm-egress"])
    runner("b", networks=["proxy"])
    with pytest.raises(JobError, match=r"not one any runner offers sandboxes \(offered: llm-egress, proxy;"):
        make(alice, network="egress")
    with django_capture_on_commit_callbacks(execute=False):
        job = make(alice, network="proxy")
    assert job.network == "proxy"
    with django_capture_on_commit_callbacks(execute=False):
        assert make(alice).network is None  # no network is always fine


def test_the_api_refuses_host_with_a_reason_and_lists_each_runners_networks(client, alice, catalogue, public_data):
    from django.contrib.auth.models import Permission

    alice.user_permissions.add(Permission.objects.get(codename="submit_job"))
    runner(networks=["llm-egress"])
    client.force_login(alice)
    response = client.post("/api/jobs/", {"agent": "baseline", "competitions": ["spaceship-titanic"],
                                          "time_limit_minutes": 5, "network": "host"}, content_type="application/json")
    assert response.status_code == 400 and "host" in response.json()["detail"]
    assert Job.objects.count() == 0
    listed = client.get("/api/runners/").json()
    assert [(r["name"], r["networks"]) for r in listed] == [("r1", ["llm-egress"])]


@pytest.mark.parametrize("name", NEVER)
def test_the_runner_refuses_a_forbidden_network_right_before_the_start(settings, name):
    settings.SANDBOX_NETWORKS = ["egress"]
    with pytest.raises(NetworkRefused, match=re.escape(f"the network {name!r}")):
        check_sandbox_network(name)


def test_the_runner_refuses_a_network_its_operator_did_not_list(settings):
    settings.SANDBOX_NETWORKS = ["egress"]
    check_sandbox_network("egress")
    check_sandbox_network(None)  # no network
    check_sandbox_network("")
    with pytest.raises(NetworkRefused, match=r"'proxy' is not one this runner offers sandboxes \(offered: egress;"):
        check_sandbox_network("proxy")
    settings.SANDBOX_NETWORKS = []
    with pytest.raises(NetworkRefused, match=r"\(offered: none; runners list them in MEDALBOARD_SANDBOX_NETWORKS"):
        check_sandbox_network("egress")


@pytest.mark.parametrize("name", ["host", "bridge", "container:db"])
def test_a_runner_listing_a_forbidden_network_does_not_start(db, settings, name):
    settings.SANDBOX_NETWORKS = ["egress", name]
    with pytest.raises(SystemCheckError, match=f"MEDALBOARD_SANDBOX_NETWORKS: '{name}'"):
        call_command("check")
    with pytest.raises(ImproperlyConfigured, match=f"MEDALBOARD_SANDBOX_NETWORKS: '{name}'"):
        _register()
    with pytest.raises(ImproperlyConfigured):
        check_sandbox_network("egress")  # the whole list is suspect
    assert not Runner.objects.exists()


def test_runners_report_their_networks_when_they_register_and_heartbeat(db, settings):
    settings.SANDBOX_NETWORKS = ["llm-egress"]
    assert _register().networks == ["llm-egress"]
    settings.SANDBOX_NETWORKS = ["llm-egress", "proxy"]
    registry.heartbeat("net-runner")
    assert Runner.objects.get(name="net-runner").networks == ["llm-egress", "proxy"]


def _register() -> Runner:
    return registry.register(name="net-runner", backend=LocalBackend(), hardware=Hardware(cpu_count=2),
                             queues=["jobs.cpu"], concurrency=1)



@pytest.mark.docker
@needs_agent_tools
def test_a_job_on_a_network_its_runner_offers_runs_attached_to_that_network_only(
    alice, job_world, loopback, docker_agent, settings
):
    """With Docker: the runner's operator made an internal network and listed it; the job names it;
    the container joins it and nothing else (no bridge, no host)."""
    name = f"medalboard-test-egress-{os.getpid()}"
    network = docker_agent.client.networks.create(name, internal=True, labels={"medalboard.test": "1"})
    try:
        settings.SANDBOX_NETWORKS = [name]
        registry.heartbeat(job_world.name)  # the runner reports it
        job = create_job(user=alice, agent="scripted", competitions=[COMPETITION], time_limit_minutes=1,
                         settings={"steps": 2, "sleep": 0.5}, network=name)
        task = job.tasks.get()
        inspector = test_jobs_docker.Inspector(docker_agent, task.pk)
        inspector.start()
        outcome = loopback.run_graded(task.pk, docker_agent)
        inspector.join()
        assert outcome.status == "succeeded", outcome.error
        assert inspector.info["HostConfig"]["NetworkMode"] == name, inspector.info["Config"]["Labels"]
        assert set(inspector.info["NetworkSettings"]["Networks"]) == {name}
    finally:
        network.remove()

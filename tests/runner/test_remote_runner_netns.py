"""A runner in its own network namespace: its one way out is a veth pair to the site's HTTP port
(iptables drops the rest), its environment holds the URL and the token only. It runs the built-in
baseline agent and the site grades the run; a connection cut mid-upload is resumed with nothing
stored twice; a revoked token stops it and its task goes back to the queue."""

from __future__ import annotations

import hashlib
import os
from urllib.parse import urlsplit

import pytest

from leaderboard.models import Artifact, Run
from runner.api_v1 import tokens
from runner.jobs.services import create_job
from runner.models import JobTask, RemoteUpload, Runner
from tests.job_support import needs_agent_tools, scripted_job, wait_until
from tests.remote_runner_support import Netns, Proxy, RemoteRunner, can_make_netns, new_token

pytestmark = [
    needs_agent_tools,
    pytest.mark.serial,
    pytest.mark.skipif(not can_make_netns(), reason="needs root, ip and iptables for a network namespace"),
]


@pytest.fixture
def behind_netns(live_server, settings):
    """(the site's URL as seen from inside the namespace, the proxy, the namespace)."""
    site = urlsplit(live_server.url)
    proxies: list[Proxy] = []

    def port_of(host: str) -> int:
        proxies.append(Proxy(host, (site.hostname, site.port)))
        return proxies[0].port

    netns = Netns(os.getpid() % 1000, port_of)
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, netns.host_ip]
    try:
        yield f"http://{netns.host_ip}:{netns.port}", proxies[0], netns
    finally:
        proxies[0].close()
        netns.delete()


def test_a_runner_in_its_own_network_namespace_runs_the_baseline_and_the_site_grades_it(
    live_server, transactional_db, staff, job_world, grading_worker, behind_netns, tmp_path, smoke_root
):
    from leaderboard.competitions.catalogue import import_catalogue

    url, _, netns = behind_netns
    site = urlsplit(live_server.url)
    assert netns.reaches(netns.host_ip, netns.port)
    assert not netns.reaches(site.hostname, site.port)  # the site's own address: no route from inside
    assert not netns.reaches(netns.host_ip, 22) and not netns.reaches(netns.host_ip, 6379)
    import_catalogue(smoke_root, data_dir=smoke_root / "data")
    job = create_job(user=staff, agent="baseline", competitions=["smoke-wine"], time_limit_minutes=0.4)
    runner = RemoteRunner(
        url,
        new_token("remote-netns"),
        tmp_path / "host",
        "--tasks",
        "1",
        prefix=tuple(netns.exec),
    )
    assert runner.wait(180) == 0, runner.output()
    task = JobTask.objects.get(job=job)
    assert task.status in (JobTask.Status.SUCCEEDED, JobTask.Status.TIMED_OUT), (task.error, runner.output())
    run = wait_until(
        lambda: Run.objects.filter(pk=task.run_id, status=Run.Status.GRADED).first(), 90, "graded", grading_worker
    )
    assert run.valid_submission and run.score is not None, run.grading_error
    assert run.n_steps >= 1 and run.snapshots.exists()


def test_a_connection_cut_mid_upload_resumes_and_nothing_is_stored_twice(
    transactional_db, alice, job_world, grading_worker, behind_netns, tmp_path
):
    url, proxy, netns = behind_netns
    job = scripted_job(alice, steps=2, sleep=0.1, big_log_mb=8)
    proxy.cut_once_after(3 << 20, down_s=3.0)  # in the middle of the 8 MiB file, for 3 s
    runner = RemoteRunner(url, new_token("remote-cut"), tmp_path / "host", "--tasks", "1", prefix=tuple(netns.exec))
    assert runner.wait(180) == 0, runner.output()
    assert proxy.cuts == 1 and "site unreachable" in runner.output()
    task = JobTask.objects.get(job=job)
    assert task.status == JobTask.Status.SUCCEEDED, (task.error, runner.output())
    big = Artifact.objects.get(run_id=task.run_id, name="logs/big.log")
    block = bytes(range(256)) * 4096
    expected = b"".join(block[n:] + block[:n] for n in range(8))
    assert big.size == len(expected) and hashlib.sha256(big.file.read()).digest() == hashlib.sha256(expected).digest()
    assert RemoteUpload.objects.filter(task=task, name="logs/big.log").count() == 1
    assert Artifact.objects.filter(run_id=task.run_id, name="logs/big.log").count() == 1
    run = wait_until(
        lambda: Run.objects.filter(pk=task.run_id, status=Run.Status.GRADED).first(), 90, "graded", grading_worker
    )
    assert run.score == pytest.approx(1.0)


def test_a_revoked_runner_stops_and_its_task_goes_back_to_the_queue(
    transactional_db, alice, job_world, behind_netns, tmp_path
):
    url, _, netns = behind_netns
    job = scripted_job(alice, steps=200, sleep=0.5)
    folder = tmp_path / "host"
    runner = RemoteRunner(url, new_token("remote-revoked"), folder, prefix=tuple(netns.exec))
    try:
        wait_until(lambda: Run.objects.filter(job_task__job=job, n_steps__gte=2).exists(), 90, "running")
    except AssertionError:
        raise AssertionError(runner.output()) from None
    assert tokens.revoke(Runner.objects.get(name="remote-revoked")) == 1
    assert runner.wait(60) == 3, runner.output()  # well within a minute
    task = JobTask.objects.get(job=job)
    assert task.status == JobTask.Status.QUEUED and task.attempts == 0
    assert not any((folder / "work").glob("task-*")), "the sandbox's folders are left behind"


def test_a_runner_that_loses_the_site_drops_its_task_and_takes_it_again_once_back(
    transactional_db, alice, job_world, grading_worker, behind_netns, tmp_path
):
    url, proxy, netns = behind_netns
    job = scripted_job(alice, steps=20, sleep=0.3)
    runner = RemoteRunner(
        url, new_token("remote-lost"), tmp_path / "host", "--tasks", "2", prefix=tuple(netns.exec), lost_site_s=4
    )
    wait_until(lambda: Run.objects.filter(job_task__job=job, n_steps__gte=3).exists(), 90, "running")
    proxy.outage(15)  # past the runner's bounded wait (4 s) and the task's lease (5 s): the sweep re-queues it
    task = wait_until(
        lambda: JobTask.objects.filter(job=job, status=JobTask.Status.SUCCEEDED).first(),
        120,
        "succeeded again",
        grading_worker,
    )
    runner.process.terminate()
    runner.wait(30)
    assert "abandoned" in runner.output() and "site unreachable" in runner.output()
    assert task.attempts == 2, task.attempts
    run = wait_until(
        lambda: Run.objects.filter(pk=task.run_id, status=Run.Status.GRADED).first(), 90, "graded", grading_worker
    )
    assert run.score == pytest.approx(1.0) and run.n_steps == 20  # the second attempt's steps only
    assert Artifact.objects.filter(run=run, name="submission/submission.csv").count() == 1


@pytest.mark.docker
def test_a_runner_in_its_own_network_namespace_runs_a_docker_agent(
    transactional_db, alice, job_world, grading_worker, behind_netns, tmp_path
):
    from django.conf import settings

    from runner.backends.docker import DockerBackend
    from runner.models import AgentDefinition
    from tests.job_support import SCRIPTED_AGENT

    if not DockerBackend().image_exists(settings.MEDALBOARD_AGENT_IMAGE):
        pytest.skip(f"agent image {settings.MEDALBOARD_AGENT_IMAGE} not built (python manage.py build_agent_image)")
    # The scripted test agent, inline: the image has Debian's python3, the test folder is not mounted.
    AgentDefinition.objects.filter(name="scripted").update(command=["python3", "-c", SCRIPTED_AGENT.read_text()])
    url, _, netns = behind_netns
    job = scripted_job(alice, steps=3, sleep=0.3)
    name = f"remote-docker-{os.getpid()}"
    runner = RemoteRunner(
        url,
        new_token("remote-docker"),
        tmp_path / "host",
        "--tasks",
        "1",
        "--backend",
        "docker",
        prefix=tuple(netns.exec),
        name=name,
    )
    assert runner.wait(240) == 0, runner.output()
    task = JobTask.objects.get(job=job)
    assert task.status == JobTask.Status.SUCCEEDED, (task.error, runner.output())
    run = wait_until(
        lambda: Run.objects.filter(pk=task.run_id, status=Run.Status.GRADED).first(), 90, "graded", grading_worker
    )
    assert run.score == pytest.approx(1.0) and run.n_steps == 3
    assert run.recipe["sandbox"]["backend"] == "docker" and run.recipe["sandbox"]["attached"] == "api"
    assert run.recipe["agent"]["image"] == settings.MEDALBOARD_AGENT_IMAGE
    assert run.recipe["agent"]["image_id"].startswith("sha256:")
    assert DockerBackend(runner_name=name).client.containers.list(all=True, filters={"name": name}) == []

"""An agent packaged as MLE-bench packages it, on a runner attached with the site's URL and a token.

The claim names the agent's files by sha256 (no path of the site's), only the runner holding the task
fetches them, and only the job's own version is served; a Docker runner with the mlebench-env base
takes such a task and builds the image itself (marker docker: end to end in a live server, the
site's grading worker grading the run), and a build that fails is the task's failure, saying why."""

from __future__ import annotations

import hashlib
import json
import uuid

import pytest
from rest_framework.test import APIClient

from runner.agents import base_image
from runner.agents.importer import import_agents
from runner.api_v1 import tokens
from runner.jobs.services import create_job
from runner.models import JobTask
from tests.job_support import COMPETITION, needs_agent_tools
from tests.mlebench_agent_support import DOCKERFILE, make_agents_dir
from tests.remote_runner_support import can_make_netns

pytestmark = needs_agent_tools
API = "/api/runner/v1/"
SECRET = "remote-probe-secret-5c2e"


def runner_client(
    name: str, backend: str = "docker", images: tuple[str, ...] = (f"{base_image.TAG}:latest",)
) -> APIClient:
    _, token = tokens.issue(name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Runner {token}")
    hardware = {"cpu_count": 4, "memory_gb": 16, "images": list(images), "backend": backend}
    assert client.post(API + "register/", hardware, format="json").status_code == 200
    return client


def probe_job(user, tmp_path, **changes: str):
    """A job of the test's probe agent (tests/mlebench_agent_support.py), imported without a build."""
    import_agents(make_agents_dir(tmp_path, **changes), build=False, log=lambda *a: None)
    return create_job(
        user=user, agent="probe", competitions=[COMPETITION], time_limit_minutes=2, env={"MY_KEY": SECRET}
    )


@pytest.fixture
def no_broker(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        yield


def test_the_claim_names_the_agents_files_by_hash_and_only_its_runner_fetches_them(
    alice, job_world, tmp_path, no_broker
):
    job = probe_job(alice, tmp_path)
    client = runner_client("remote-agents-a")
    answer = client.post(API + "claim/", {"wait_s": 0}, format="json")
    assert answer.status_code == 200, answer.content
    claim = answer.json()
    agent = claim["agent"]
    assert agent["name"] == "probe" and agent["version"] == job.agent_version and agent["image"] == job.agent_image
    assert agent["secrets"] == ["MY_KEY"] and SECRET not in json.dumps(agent)
    assert "source_dir" not in agent["package"] and str(tmp_path) not in json.dumps(agent)
    files = {f["path"]: f for f in agent["files"]}
    assert set(files) == {
        f"probe/{n}" for n in ("config.yaml", "Dockerfile", "start.sh", "probe.py", "requirements.txt")
    }
    wanted = files["probe/Dockerfile"]["sha256"]
    fetched = client.get(f"{API}tasks/{claim['task']}/agent/{wanted}/")
    assert fetched.status_code == 200
    content = b"".join(fetched.streaming_content)
    assert content == DOCKERFILE.encode() and hashlib.sha256(content).hexdigest() == wanted
    assert client.get(f"{API}tasks/{claim['task']}/agent/{'0' * 64}/").status_code == 404
    assert runner_client("remote-agents-b").get(f"{API}tasks/{claim['task']}/agent/{wanted}/").status_code == 403


def test_only_a_docker_runner_that_can_build_it_takes_a_packaged_agents_task(alice, job_world, tmp_path, no_broker):
    job = probe_job(alice, tmp_path)
    for name, backend, images in (("remote-local", "local", ("*",)), ("remote-bare", "docker", ("other:1",))):
        assert (
            runner_client(name, backend, images).post(API + "claim/", {"wait_s": 0}, format="json").status_code == 204
        )
    assert job.tasks.get().status == JobTask.Status.QUEUED
    has_image = runner_client("remote-has-image", "docker", (job.agent_image,))
    assert has_image.post(API + "claim/", {"wait_s": 0}, format="json").status_code == 200


def test_a_folder_changed_on_the_site_since_the_job_is_never_served(alice, job_world, tmp_path, no_broker):
    job = probe_job(alice, tmp_path)
    (tmp_path / "agents" / "probe" / "probe.py").write_text("print('changed after the job was made')\n")
    with pytest.raises(RuntimeError, match="no longer holds the job's version"):  # a 500, the task failed
        runner_client("remote-agents-c").post(API + "claim/", {"wait_s": 0}, format="json")
    task = job.tasks.get()
    assert task.status == JobTask.Status.FAILED
    assert "no longer holds the job's version" in task.error and job.agent_version[:16] in task.error


# --- end to end: a runner process, a live server, the site's grading ------------------------------


@pytest.fixture
def fresh_probe(tmp_path):
    """The probe agent's folder with a content of its own (a new version, so an image no earlier test
    left on this Docker host: the runner must build it); its image removed after the test."""
    import docker

    agents = make_agents_dir(tmp_path, requirements_txt=f"# {uuid.uuid4().hex}\nnumpy\npandas\n")
    made: list[str] = []
    yield agents, made
    engine = docker.from_env()
    for tag in made:
        try:
            engine.images.remove(tag, force=True)
        except docker.errors.ImageNotFound:
            pass


@pytest.mark.docker
@pytest.mark.serial
def test_a_remote_runner_builds_an_mlebench_agent_and_the_site_grades_its_run(
    live_server, transactional_db, alice, job_world, mlebench_env, fresh_probe, grading_worker, tmp_path
):
    import docker

    from leaderboard.models import Run
    from runner.agents.images import LABEL
    from tests.job_support import wait_until
    from tests.remote_runner_support import RemoteRunner, new_token

    agents, made = fresh_probe
    import_agents(agents, build=False, log=lambda *a: None)
    job = create_job(
        user=alice,
        agent="probe/omega",
        competitions=[COMPETITION],
        seeds=2,
        time_limit_minutes=2,
        env={"MY_KEY": SECRET},
    )
    made.append(job.agent_image)
    engine = docker.from_env()
    with pytest.raises(docker.errors.ImageNotFound):
        engine.images.get(job.agent_image)
    host = tmp_path / "host"
    runner = RemoteRunner(live_server.url, new_token("remote-mlebench"), host, "--backend", "docker", "--tasks", "2")
    assert runner.wait(480) == 0, runner.output()
    task, second = JobTask.objects.select_related("runner").filter(job=job).order_by("seed")
    for each in (task, second):
        assert each.status == JobTask.Status.SUCCEEDED, (each.error, each.log_tail, runner.output())
        assert each.runner.name == "remote-mlebench"
    # Built once, from files fetched once: the second task of the version found its image by its tag.
    assert runner.output().count(f"image {job.agent_image} built") == 1, runner.output()
    assert runner.output().count(f"image {job.agent_image} is here already") == 1, runner.output()
    image = engine.images.get(job.agent_image)  # built by the runner, on this host, from the fetched folder
    assert image.labels[LABEL] == job.agent_version
    trees = list((host / "work" / "cache" / "agents" / "trees").glob("*.complete"))
    assert [t.name for t in trees] == [f"{job.agent_version}.complete"]
    run = wait_until(
        lambda: Run.objects.filter(pk=task.run_id, status=Run.Status.GRADED).first(), 60, "graded", grading_worker
    )
    assert run.valid_submission and run.score is not None
    assert run.recipe["agent"]["image_id"] == image.id and run.recipe["agent"]["version"] == job.agent_version
    with run.artifacts.get(name="logs/probe.json").file.open("rb") as handle:
        record = json.loads(handle.read())
    assert record["argv"] == ["steps=7", "mode=fast", "agent.code.model=big"]  # omegaconf, as in-process
    env = record["env"]
    assert env["PROBE_TOKEN"] == "[secret]" and SECRET not in json.dumps(record)  # resolved, then redacted
    assert env["COMPETITION_ID"] == COMPETITION and env["AGENT_DIR"] == "/home/agent" and env["EXTRA"] == "yes"
    assert record["user"] == "nonroot" and record["python"].startswith("/opt/conda/envs/agent/")
    assert record["health"] == {"status": "running"} and record["valid"] == {"result": "Submission is valid."}
    assert "2 minutes" in record["instructions"] and not record["data_writable"]
    left = [p for p in host.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert left == [], left


@pytest.mark.docker
@pytest.mark.serial
def test_an_agent_that_does_not_build_on_the_runner_fails_its_task_saying_why(
    live_server, transactional_db, alice, job_world, mlebench_env, fresh_probe, tmp_path
):
    from tests.remote_runner_support import RemoteRunner, new_token

    agents, made = fresh_probe
    dockerfile = agents / "probe" / "Dockerfile"
    dockerfile.write_text(
        dockerfile.read_text().replace("RUN mkdir -p", "RUN echo failing on purpose && exit 7\nRUN mkdir -p")
    )
    import_agents(agents, build=False, log=lambda *a: None)
    job = create_job(
        user=alice, agent="probe", competitions=[COMPETITION], time_limit_minutes=2, env={"MY_KEY": SECRET}
    )
    made.append(job.agent_image)
    runner = RemoteRunner(
        live_server.url, new_token("remote-mlebench-bad"), tmp_path / "host", "--backend", "docker", "--tasks", "1"
    )
    assert runner.wait(480) == 0, runner.output()
    task = JobTask.objects.get(job=job)
    assert task.status == JobTask.Status.FAILED
    assert "the image of the agent probe did not build on this runner" in task.error, task.error
    assert "exit 7" in task.error and "likely cause" in task.error


@pytest.mark.docker
@pytest.mark.serial
@pytest.mark.skipif(not can_make_netns(), reason="needs root, ip and iptables for a network namespace")
def test_a_runner_whose_one_way_out_is_the_sites_http_port_builds_and_runs_it(
    live_server, transactional_db, alice, job_world, mlebench_env, fresh_probe, grading_worker, tmp_path, settings
):
    """In its own network namespace (tests/remote_runner_support.py: a veth pair to the site's HTTP
    port only), with the URL and the token as its whole environment: the agent's folder reaches it
    through the runner API or not at all."""
    import os
    from urllib.parse import urlsplit

    from leaderboard.models import Run
    from tests.job_support import wait_until
    from tests.remote_runner_support import Netns, Proxy, RemoteRunner, new_token

    site = urlsplit(live_server.url)
    proxies: list[Proxy] = []

    def port_of(host: str) -> int:
        proxies.append(Proxy(host, (site.hostname, site.port)))
        return proxies[0].port

    netns = Netns(os.getpid() % 1000 + 1, port_of)
    try:
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, netns.host_ip]
        assert not netns.reaches(site.hostname, site.port)
        agents, made = fresh_probe
        import_agents(agents, build=False, log=lambda *a: None)
        job = create_job(
            user=alice, agent="probe", competitions=[COMPETITION], time_limit_minutes=2, env={"MY_KEY": SECRET}
        )
        made.append(job.agent_image)
        runner = RemoteRunner(
            f"http://{netns.host_ip}:{netns.port}",
            new_token("remote-mlebench-netns"),
            tmp_path / "host",
            "--backend",
            "docker",
            "--tasks",
            "1",
            prefix=tuple(netns.exec),
        )
        assert runner.wait(480) == 0, runner.output()
        task = JobTask.objects.get(job=job)
        assert task.status == JobTask.Status.SUCCEEDED, (task.error, task.log_tail, runner.output())
        assert f"image {job.agent_image} built" in runner.output()
        run = wait_until(
            lambda: Run.objects.filter(pk=task.run_id, status=Run.Status.GRADED).first(), 60, "graded", grading_worker
        )
        assert run.valid_submission and run.score is not None
    finally:
        for proxy in proxies:
            proxy.close()
        netns.delete()


# --- the runner's side, with a site that serves what the test says ---------------------------------


class FakeSite:
    """Serves files by sha256 as the runner API does (`fetch` checks the hash, as the client does)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.fetches = files, 0

    def fetch(self, claim: dict, sha256: str, target, what: str = "data") -> None:
        assert what == "agent"
        content = self.files[sha256]
        if hashlib.sha256(content).hexdigest() != sha256:
            from runner.client import ApiError

            raise ApiError(502, f"agent file {sha256}: the content does not match its hash")
        self.fetches += 1
        target.write_bytes(content)


def agent_claim(agents, variant_id: str = "probe", **replaced: bytes) -> tuple[dict, FakeSite]:
    """A claim's `agent` for the folder `agents` as the site would describe it; `replaced` serves other
    bytes under a file's name (its sha256 kept as the site named it)."""
    from runner.agents.mlebench import read_agents

    variant = {v.id: v for v in read_agents(agents)}[variant_id]
    files, served = [], {}
    for path in sorted((agents / "probe").iterdir()):
        content = path.read_bytes()
        sha = hashlib.sha256(content).hexdigest()
        files.append({"path": f"probe/{path.name}", "sha256": sha, "size": len(content), "executable": False})
        served[sha] = replaced.get(path.name, content)
    package = {k: v for k, v in variant.as_config().items() if k != "source_dir"}
    agent = {
        "name": variant.id,
        "version": variant.version,
        "image": variant.image,
        "package": package,
        "secrets": ["MY_KEY"],
        "files": files,
    }
    return {"task": 1, "agent": agent}, FakeSite(served)


def test_the_runner_puts_the_folder_together_once_and_checks_it_hashes_to_the_version(tmp_path):
    from runner.remote.agents import Images

    claim, site = agent_claim(make_agents_dir(tmp_path / "site"))
    images = Images(tmp_path / "cache")
    variant = images.variant(site, claim)
    assert variant.version == claim["agent"]["version"] and variant.id == "probe"
    assert variant.source_dir.startswith(str(tmp_path / "cache")) and site.fetches == 5
    assert images.variant(site, claim).version == variant.version and site.fetches == 5  # kept: nothing fetched


def test_the_runner_refuses_a_folder_that_does_not_hash_to_the_jobs_version(tmp_path):
    from runner.remote.agents import AgentUnavailable, Images

    claim, _ = agent_claim(make_agents_dir(tmp_path / "site"))
    other, site = agent_claim(make_agents_dir(tmp_path / "other", probe_py="print('another agent')\n"))
    claim["agent"]["files"] = other["agent"]["files"]  # the files of another version, under this version
    with pytest.raises(AgentUnavailable, match="does not hash to the job's version"):
        Images(tmp_path / "cache").variant(site, claim)
    assert not (tmp_path / "cache" / "trees" / f"{claim['agent']['version']}.complete").exists()
    claim, site = agent_claim(make_agents_dir(tmp_path / "third"), **{"probe.py": b"print('swapped')\n"})
    with pytest.raises(AgentUnavailable, match="could not be fetched: .*does not match its hash"):
        Images(tmp_path / "cache").variant(site, claim)
    claim["agent"]["files"][0]["path"] = "../escape"
    with pytest.raises(AgentUnavailable, match="outside the data folder"):
        Images(tmp_path / "cache2").variant(site, claim)


def test_a_packaged_agents_secret_that_is_a_provider_key_resolves_to_the_gateways_token(tmp_path, monkeypatch):
    """As in-process: the variant's `${{ secrets.OPENAI_API_KEY }}` is the run's token (the key stays in
    the runner's gateway), and the gateway's forwarder wraps MLE-bench's command, not the reverse."""
    from types import SimpleNamespace

    from runner.backends import TOOLS_DIR, SandboxSpec
    from runner.backends.docker import PATHS
    from runner.remote import agents as remote_agents
    from runner.remote.llm import RemoteLlm
    from tests.gateway_support import REAL_OPENAI_KEY
    from tests.mlebench_agent_support import CONFIG

    claim, site = agent_claim(make_agents_dir(tmp_path, config_yaml=CONFIG.replace("MY_KEY", "OPENAI_API_KEY")))
    claim["agent"]["secrets"] = ["OPENAI_API_KEY"]
    claim.update(competition=COMPETITION, timing={"poll_s": 1}, sandbox={"env": {"OPENAI_API_KEY": REAL_OPENAI_KEY}})
    monkeypatch.setattr(remote_agents.Images, "image", lambda self, client, claim, engine: claim["agent"]["image"])
    (tmp_path / "work").mkdir()
    spec = SandboxSpec(
        name="t",
        command=["x"],
        data_dir=tmp_path,
        workdir=tmp_path / "work",
        tools_dir=TOOLS_DIR,
        env={"OPENAI_API_KEY": REAL_OPENAI_KEY, "SEED": "0"},
        time_limit_s=90,
    )
    backend = SimpleNamespace(name="docker", paths=lambda spec: PATHS, client=None)
    llm = RemoteLlm(claim)
    try:
        started = llm.start(spec, backend, adapt=remote_agents.adapter(site, claim, backend, tmp_path / "agents"))
    finally:
        llm.stop()
    token = started.env["OPENAI_API_KEY"]
    assert token != REAL_OPENAI_KEY and started.env["PROBE_TOKEN"] == token
    assert REAL_OPENAI_KEY not in json.dumps([started.command, started.env])
    assert started.command[1].endswith("gateway_forwarder.py") and "/home/agent/start.sh" in started.command
    assert started.image == claim["agent"]["image"] and started.home_dir is not None


def test_two_slots_needing_the_same_agent_folder_at_once_fetch_each_file_once(tmp_path):
    """The second slot asks while the first is still fetching (the site holds the first fetch until
    the second has ticked, i.e. waits for the folder): it gets the first's folder, fetched once."""
    import threading

    from runner.remote.agents import Images

    claim, site = agent_claim(make_agents_dir(tmp_path / "site"))
    first_fetching, second_inside = threading.Event(), threading.Event()
    real_fetch = site.fetch

    def held_fetch(*args, **kwargs):
        if threading.current_thread().name == "first":
            first_fetching.set()
            assert second_inside.wait(30), "the second slot never came"
        return real_fetch(*args, **kwargs)

    site.fetch = held_fetch
    images, variants, failures = Images(tmp_path / "cache"), {}, []

    def put_together(tick) -> None:
        try:
            variants[threading.current_thread().name] = images.variant(site, claim, tick=tick)
        except BaseException as exc:  # noqa: BLE001 - the test says which slot failed and how
            failures.append(exc)

    first = threading.Thread(target=put_together, args=(lambda: None,), name="first")
    first.start()
    assert first_fetching.wait(30)
    second = threading.Thread(target=put_together, args=(second_inside.set,), name="second")
    second.start()
    first.join(60)
    second.join(60)
    assert failures == []
    assert variants["first"].version == variants["second"].version == claim["agent"]["version"]
    assert site.fetches == 5  # each of the agent's files once

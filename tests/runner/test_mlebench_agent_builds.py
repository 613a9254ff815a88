"""A folder of MLE-bench-style agents where not everything builds: import_agents builds every agent it
can, stores the ones whose build failed with the step, its last lines and the likely cause, leaves
out the refused ones with the reason, and says so (and that --no-build exists); a job naming an agent
that did not build is refused with that reason and the command that builds it."""

from __future__ import annotations

import uuid

import pytest
from django.core.management import CommandError, call_command

from runner.agents import images
from runner.agents.images import AgentBuildError, failed_step
from runner.agents.importer import import_agents, packaged_variants
from runner.jobs.services import JobError, create_job
from runner.models import AgentDefinition
from tests.job_support import COMPETITION


def _agent(agents, name: str, dockerfile: str) -> None:
    folder = agents / name
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(f"{name}:\n  start: {name}/start.sh\n  dockerfile: {name}/Dockerfile\n"
                                        f"{name}/dev:\n  start: {name}/start.sh\n  dockerfile: {name}/Dockerfile\n")
    (folder / "Dockerfile").write_text(dockerfile)
    (folder / "start.sh").write_text(f"#!/bin/bash\necho {uuid.uuid4().hex}\n")  # a new version: a real build


def make_mixed_folder(root):
    agents = root / "agents"
    _agent(agents, "good", "FROM mlebench-env\nCOPY . /home/agent\n")
    _agent(agents, "broken", "FROM mlebench-env\nCOPY . /home/agent\nRUN curl -fsS http://deb.debian.org/debian/ "
                             "-o /dev/null\nRUN echo never\n")
    _agent(agents, "hostile", "FROM mlebench-env\nADD http://127.0.0.1:9/payload /home/agent/payload\n")
    return agents


def _log(*lines: str) -> list[dict]:
    return [{"stream": line + "\n"} for line in lines]


@pytest.mark.parametrize("said, cause", [
    (["Step 6/9 : RUN apt-get update && apt-get install ffmpeg libsm6 libxext6  -y",
      "E: Unmet dependencies. Try 'apt --fix-broken install' with no packages (or specify a solution)."], "mirror"),
    (["Step 6/9 : RUN apt-get update && apt-get install ffmpeg libsm6 libxext6  -y",
      "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving "
      "'deb.debian.org'", "E: Unable to locate package ffmpeg"], "network"),
    (["Step 8/12 : RUN git clone https://github.com/thesofakillers/aideml.git",
      "fatal: unable to access 'https://github.com/thesofakillers/aideml.git/': Could not resolve host: "
      "github.com"], "network"),
    (["Step 16/19 : RUN git clone https://github.com/JunShern/MLAgentBench.git /home/agent/MLAgentBench",
      "fatal: repository 'http://127.0.0.1:8123/JunShern/MLAgentBench.git/' not found"], "mirror"),
    (["Step 3/5 : RUN mount -t tmpfs none /mnt", "mount: /mnt: permission denied."], "privileged"),
    (["Step 15/16 : RUN conda run -n agent pip install -r /home/agent/requirements.txt",  # git+https:// in light
      "\x1b[91mERROR: Cannot find command 'git' - do you have 'git' installed and in your PATH?\x1b[0m"], "base"),
    (["Step 2/3 : RUN python -c 'raise SystemExit(3)'"], ""),
    (["Step 3/4 : RUN curl -fsS http://deb.debian.org/debian/ -o /dev/null"], "network"),  # its output dropped
])
def test_a_failed_step_is_named_with_its_last_lines_and_likely_cause(said, cause):
    error = failed_step("aide", "The command returned a non-zero code: 100", _log("Step 1/9 : FROM mlebench-env",
                                                                                   *said))
    assert error.step == said[0] and error.cause == cause
    assert f"aide: docker build failed at {said[0]}" in str(error) and "\x1b" not in str(error)
    assert said[-1].replace("\x1b[91m", "").replace("\x1b[0m", "") in str(error)
    assert ("github.com" in said[-1]) == ("git mirror" in str(error))


def test_a_failed_build_leaves_the_other_agents_built_and_stored(db, tmp_path, alice, job_world, monkeypatch,
                                                                  capsys):
    agents = make_mixed_folder(tmp_path)

    def build_image(variant, **kwargs):  # as Docker would answer for the two Dockerfiles that pass the check
        if variant.context == "broken":
            raise failed_step(variant.id, "The command returned a non-zero code: 6",
                              _log("Step 3/4 : RUN curl -fsS http://deb.debian.org/debian/ -o /dev/null",
                                   "curl: (6) Could not resolve host: deb.debian.org"))
        return {"image": variant.image, "built": True, "id": "sha256:good"}

    monkeypatch.setattr(images, "build_image", build_image)
    call_command("import_agents", str(agents))
    err = capsys.readouterr().err
    assert "not imported: " in err and "'hostile'" in err and "ADD http://127.0.0.1:9/payload" in err
    assert "imported but not built: the image mlebench-agent-broken:" in err and "(of broken, broken/dev)" in err
    assert err.count("imported but not built: ") == 1  # one line per image, not per variant
    assert "2 refused, 2 not built (broken, broken/dev, hostile, hostile/dev)" in err and "--no-build" in err
    rows = {a.name: a for a in AgentDefinition.objects.filter(package_format="mlebench")}
    assert sorted(rows) == ["broken", "broken/dev", "good", "good/dev"]
    assert "build_error" not in rows["good"].package
    failure = rows["broken"].package["build_error"]
    assert failure["cause"] == "network" and failure["step"].startswith("Step 3/4 : RUN curl")
    job_world.images = [rows["good"].image]
    job_world.save()
    assert create_job(user=alice, agent="good/dev", competitions=[COMPETITION], time_limit_minutes=1)
    with pytest.raises(JobError) as refused:
        create_job(user=alice, agent="broken/dev", competitions=[COMPETITION], time_limit_minutes=1)
    said = str(refused.value)
    assert "agent broken/dev: its image mlebench-agent-broken:" in said and "did not build at Step 3/4" in said
    assert "(likely cause: network)" in said and "Could not resolve host: deb.debian.org" in said
    assert "python manage.py build_agent_images broken/dev" in said

    def built_now(variant, **kwargs):
        return {"image": variant.image, "built": True, "id": "sha256:fixed"}

    monkeypatch.setattr(images, "build_image", built_now)  # the mirror is back: build it on the runner
    call_command("build_agent_images", "broken", "broken/dev")
    assert all("build_error" not in a.package for a in AgentDefinition.objects.filter(name__startswith="broken"))
    with pytest.raises(JobError, match=r"not built on any runner \(imported with --no-build"):
        create_job(user=alice, agent="broken", competitions=[COMPETITION], time_limit_minutes=1)
    monkeypatch.setattr(images, "build_image", build_image)
    with pytest.raises(CommandError, match=r"not built: broken, broken/dev \(the others were\)"):
        call_command("build_agent_images")
    assert AgentDefinition.objects.get(name="broken").package["build_error"]["cause"] == "network"


@pytest.mark.docker
def test_mixed_folder_in_docker_builds_what_builds_and_says_why_not(db, tmp_path, alice, job_world, mlebench_env):
    from runner.backends.docker import DockerBackend
    from runner.jobs.registry import images_present

    said: list[str] = []
    report = import_agents(make_mixed_folder(tmp_path), build=True, log=said.append)
    backend = DockerBackend()
    try:
        assert sorted(report.created) == ["broken", "broken/dev", "good", "good/dev"]
        assert sorted(report.refused) == ["hostile", "hostile/dev"] and sorted(report.unbuilt) == ["broken",
                                                                                                  "broken/dev"]
        [built] = report.images
        assert built["built"] and built["image"].startswith("mlebench-agent-good:")
        reason = report.unbuilt["broken"]
        assert "docker build failed at Step 3/4 : RUN curl -fsS http://deb.debian.org/debian/" in reason
        assert "likely cause: network" in reason  # curl's own line, when the daemon does not drop it
        job_world.images = images_present(backend)
        job_world.save()
        with pytest.raises(JobError, match=r"(?s)did not build at Step 3/4.*likely cause: network.*"
                                           r"build_agent_images broken"):
            create_job(user=alice, agent="broken", competitions=[COMPETITION], time_limit_minutes=1)
        assert create_job(user=alice, agent="good", competitions=[COMPETITION], time_limit_minutes=1)
    finally:
        backend.client.images.remove(built["image"], force=True)
    with pytest.raises(AgentBuildError):  # without somewhere to put failures, one is an error
        images.build_image(packaged_variants(["broken"])[0], log=lambda *a: None)

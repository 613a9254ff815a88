"""What an agent image build may reach (marker docker): in the `registries` mode only the hosts the
operator names, through the site's proxy, and a git mirror that serves GitHub's paths, so a Dockerfile's
`git clone https://github.com/...` and pip's `git+https://github.com/...` work unchanged.

Real builds of agents' Dockerfiles through build_image, on a network of their own; the registry is
Debian's mirror (deb.debian.org, which the light mlebench-env's apt sources name), the git mirror a
bare repository served over dumb HTTP on this host's loopback (tests/git_mirror_support.py)."""

from __future__ import annotations

import os
import uuid

import docker
import pytest

from runner.agents import build_layer, build_network
from runner.agents.images import AgentBuildError, build_image
from runner.agents.mlebench import Limits, read_agents
from tests.git_mirror_support import bare_repository, served
from tests.mlebench_agent_support import make_agents_dir

pytestmark = pytest.mark.docker

HEAD = "FROM mlebench-env\n"
RELEASE = "http://deb.debian.org/debian/dists/bookworm/Release"
# Each probe records curl's exit code: 0 reached, 56 refused by the proxy, 7/28 no way there.
PROBES = f"""\
RUN GATEWAY=$(echo "$http_proxy" | sed 's|http://||; s|:.*||'); \\
    curl -sS --max-time 30 -o /dev/null {RELEASE}; echo "registry $?" >> /outcomes; \\
    curl -sS --max-time 10 -o /dev/null https://example.org/; echo "other-host $?" >> /outcomes; \\
    curl -sS --noproxy '*' --max-time 5 -o /dev/null http://$GATEWAY:{{port}}/; echo "host-direct $?" >> /outcomes; \\
    curl -sS --noproxy '*' --max-time 5 -o /dev/null http://1.1.1.1/; echo "outside-direct $?" >> /outcomes; \\
    cat /outcomes
"""


@pytest.fixture
def registries(settings):
    """The `registries` mode on a network of this test's own, removed after."""
    client = docker.from_env()
    settings.AGENTS_BUILD_NETWORK = "registries"
    settings.AGENTS_BUILD_REGISTRIES = ["deb.debian.org"]
    settings.AGENTS_BUILD_REGISTRIES_NETWORK = f"medalboard-test-build-{uuid.uuid4().hex[:8]}"
    before = {image.id for image in client.images.list(name=build_layer.TAG)}
    yield settings
    for image in client.images.list(name=build_layer.TAG):
        if image.id not in before:
            client.images.remove(image.id, force=True)
    build_network.remove_network(client, settings.AGENTS_BUILD_REGISTRIES_NETWORK)


def _build(tmp_path, dockerfile: str, said: list[str] | None = None) -> dict:
    agents = make_agents_dir(tmp_path, Dockerfile=dockerfile)
    variant = next(v for v in read_agents(agents, Limits()) if v.id == "probe")
    return build_image(variant, client=docker.from_env(), force=True, log=(said if said is not None else []).append)


def _outcomes(image: str) -> dict[str, int]:
    out = docker.from_env().containers.run(image, ["cat", "/outcomes"], network_mode="none", remove=True)
    return {name: int(code) for name, code in (line.split() for line in out.decode().splitlines())}


def _remove(built: dict) -> None:
    docker.from_env().images.remove(built["image"], force=True)


def test_registries_reach_the_named_hosts_only(db, mlebench_env, registries, tmp_path):
    import socket

    listener = socket.create_server(("0.0.0.0", 0))  # a service of this host on every address
    said: list[str] = []
    try:
        built = _build(tmp_path, HEAD + PROBES.format(port=listener.getsockname()[1]), said)
    finally:
        listener.close()
    try:
        outcomes = _outcomes(built["image"])
    finally:
        _remove(built)
    assert outcomes["registry"] == 0
    assert outcomes["other-host"] == 56  # curl: the proxy answered the CONNECT with 403
    assert outcomes["outside-direct"] in (7, 28)
    assert any(
        "RUN steps reach only deb.debian.org (MEDALBOARD_AGENTS_BUILD_NETWORK=registries)" in line for line in said
    ), said
    if os.geteuid() == 0:  # iptables usable: this host's own services are out of reach too
        assert outcomes["host-direct"] in (7, 28)
        assert any("iptables drops its packets to this host" in line for line in said)


def test_a_step_reaching_another_host_fails_naming_it(db, mlebench_env, registries, tmp_path):
    with pytest.raises(AgentBuildError) as failed:
        _build(tmp_path, HEAD + "RUN curl -fsS --max-time 20 -o /dev/null https://example.org/\n")
    assert failed.value.cause == "network"
    assert "the build reached for example.org:443, which is not among the registries" in str(failed.value)
    assert failed.value.step.startswith("Step 2/2 : RUN curl")


def test_the_same_step_reaches_nothing_in_the_default_mode(db, mlebench_env, settings, tmp_path):
    assert settings.AGENTS_BUILD_NETWORK == "none"
    with pytest.raises(AgentBuildError) as failed:
        _build(tmp_path, HEAD + f"RUN curl -fsS --max-time 20 -o /dev/null {RELEASE}\n")
    assert failed.value.cause == "network"


AIDEML_STANDIN = {
    "setup.py": "from setuptools import setup\nsetup(name='mirror-probe', version='6.3.3', "
    "py_modules=['mirror_probe'])\n",
    "mirror_probe.py": "SERVED_BY = 'the operator mirror'\n",
}
GIT_STEPS = """\
RUN git clone -q --branch v6.3.3 https://github.com/thesofakillers/aideml /opt/cloned && test -f /opt/cloned/setup.py
RUN conda run -n agent pip install --no-deps --no-build-isolation git+https://github.com/thesofakillers/aideml@v6.3.3 \\
 && conda run -n agent python -c "import mirror_probe; print(mirror_probe.SERVED_BY)" > /outcome
"""


def test_a_git_mirror_serves_github_urls_of_an_unchanged_dockerfile(db, mlebench_env, registries, tmp_path):
    root = tmp_path / "mirror"
    bare_repository(root, "thesofakillers/aideml", AIDEML_STANDIN, tag="v6.3.3")
    with served(root) as (url, asked):
        registries.AGENTS_GIT_MIRROR = url
        built = _build(tmp_path, HEAD + GIT_STEPS)
    client = docker.from_env()
    try:
        out = client.containers.run(
            built["image"], ["sh", "-c", "cat /outcome; git config --system --list"], network_mode="none", remove=True
        ).decode()
    finally:
        _remove(built)
    assert out.startswith("the operator mirror\n")
    assert f"url.{url}/.insteadof=https://github.com/" in out
    assert "/thesofakillers/aideml/info/refs?service=git-upload-pack" in asked  # git's first question, twice
    assert sum(path.startswith("/thesofakillers/aideml/objects/") for path in asked) >= 2

"""The operator's mirrors as a layer under an agent's build (no Docker: the files it holds, the FROM
it rewrites); tests/runner/test_agent_build_reach.py builds with it."""

from __future__ import annotations

import pytest

from runner.agents import build_layer
from runner.agents.images import AgentBuildError, _rebased
from runner.agents.mlebench import Limits, read_agents
from tests.mlebench_agent_support import make_agents_dir


def test_the_git_mirror_pip_index_and_ca_become_the_images_config(settings, tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\n")
    settings.AGENTS_GIT_MIRROR = "https://git.internal/github/"
    settings.AGENTS_BUILD_PIP_INDEX = "https://pypi.internal/simple"
    settings.AGENTS_BUILD_CA_BUNDLE = str(ca)
    given = build_layer.files(host_ca="/nonexistent")
    assert given["/etc/gitconfig"].decode() == (
        '[url "https://git.internal/github/"]\n\tinsteadOf = https://github.com/\n'
        f"[http]\n\tsslCAInfo = {build_layer.CA_PATH}\n"
    )
    assert given["/etc/xdg/pip/pip.conf"].decode() == (
        f"[global]\nindex-url = https://pypi.internal/simple\ncert = {build_layer.CA_PATH}\n"
    )
    assert given[build_layer.CA_PATH] == ca.read_bytes()


def test_nothing_set_and_no_host_bundle_is_no_layer(settings):
    settings.AGENTS_GIT_MIRROR = settings.AGENTS_BUILD_PIP_INDEX = settings.AGENTS_BUILD_CA_BUNDLE = ""
    assert build_layer.files(host_ca="") == {}


@pytest.mark.parametrize(
    "dockerfile, rebased",
    [
        ("FROM mlebench-env\nRUN true\n", "FROM mlebench-env-build:abc\nRUN true\n"),
        ("from mlebench-env:latest AS base\nFROM base\n", "from mlebench-env-build:abc AS base\nFROM base\n"),
        ("FROM medalboard-agent:bookworm\n", "FROM medalboard-agent:bookworm\n"),
    ],
)
def test_only_from_mlebench_env_builds_on_the_layer(tmp_path, dockerfile, rebased):
    variant = next(v for v in read_agents(make_agents_dir(tmp_path), Limits()) if v.id == "probe")
    assert _rebased(variant, dockerfile, "mlebench-env-build:abc") == rebased
    assert _rebased(variant, dockerfile, None) == dockerfile


def test_a_from_split_over_lines_is_refused_rather_than_built_without_the_mirrors(tmp_path):
    variant = next(v for v in read_agents(make_agents_dir(tmp_path), Limits()) if v.id == "probe")
    with pytest.raises(AgentBuildError, match="must be on one line of its own"):
        _rebased(variant, "FROM \\\n  mlebench-env\nRUN true\n", "mlebench-env-build:abc")

"""mlebench-env's recipe is MLE-bench's: the full flavour installs every pin of MLE-bench's
requirements (runner/agents/requirements/mlebench.txt) and its system packages, the light flavour a
subset at the same pins. A built image (the light one, marker docker) holds what its recipe pins, as
`pip freeze` in it says, records that freeze and its dpkg list, keeps dpkg consistent so an agent's
`apt-get install` works, and a run in it records the flavour and the image's id."""

from __future__ import annotations

import re
import subprocess
import uuid
from types import SimpleNamespace

import pytest

from runner import agent_image, recipes
from runner.agent_image import ImageBuildError
from runner.agents import base_image
from runner.backends.docker import image_environment

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[a-z0-9,-]+\])?==(\S+)$")
# MLE-bench's environment as its requirements.txt and its Dockerfile's installs pin it: what a run here must match.
QUOTED = {"scikit-learn": "1.5.1", "pandas": "2.2.2", "numpy": "1.26.4", "torch": "2.2.0", "tensorflow": "2.17.0",
          "lightgbm": "4.5.0", "xgboost": "2.1.1", "catboost": "1.2.5", "transformers": "4.44.2", "timm": "0.9.7"}


def _pins(name: str) -> dict[str, str]:
    found = {}
    for line in (base_image.REQUIREMENTS / name).read_text().splitlines():
        for word in line.split("#", 1)[0].split():
            match = PIN.match(word)
            assert match, f"{name}: {word!r} is not an exact pin"
            found[_normal(match.group(1))] = match.group(3)
    return found


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _freeze(text: str) -> dict[str, str]:
    return {_normal(line.split("==")[0]): line.split("==")[1] for line in text.split() if "==" in line}


def test_the_full_recipe_pins_what_mlebench_pins_and_light_is_a_subset():
    full, heavy, light = _pins("mlebench.txt"), _pins("mlebench-heavy.txt"), _pins("light.txt")
    assert len(full) == 92 and {k: full[k] for k in QUOTED} == QUOTED
    assert heavy == {"tensorflow": "2.17", "torch": "2.2.0", "torchaudio": "2.2.0", "torchtext": "0.17.0",
                     "torchvision": "0.17.0"}
    assert all(full[name] == version for name, version in heavy.items() if name != "tensorflow")
    assert light and all(full.get(name) == version for name, version in light.items()), light
    assert not {"torch", "tensorflow", "lightgbm", "xgboost", "transformers"} & set(light)
    steps = base_image.PIP_STEPS
    assert steps["full"][0] == ("wheel==0.44.0",)  # what a conda environment has and a venv lacks
    assert [s[-1].rsplit("/", 1)[-1] for s in steps["full"][1:2] + steps["light"]] == ["mlebench.txt", "light.txt"]
    assert steps["full"][2] == ("tensorflow[and-cuda]==2.17",) and steps["full"][3][0] == "torch==2.2.0"


def test_the_flavours_differ_in_what_they_install_and_name_themselves():
    full, light = base_image.recipe("full"), base_image.recipe("light")
    assert {"git", "build-essential", "ffmpeg", "libsm6", "libxext6", "p7zip-full", "tmux", "sudo",
            "openssh-server", "gettext"} <= set(full.apt_packages) and light.apt_packages == ()
    assert (full.flavour, light.flavour) == ("full", "light") and full.revision != light.revision
    assert light.python == full.python == "/opt/conda/envs/agent/bin/python"
    assert base_image.RECIPE.flavour == "light"  # what tests and CI build as mlebench-env
    with pytest.raises(ImageBuildError, match="no mlebench-env flavour 'heavy' \\(light or full\\)"):
        base_image.recipe("heavy")


def test_a_run_records_the_flavour_and_digest_of_its_image(db, tmp_path):
    labels = {agent_image.FLAVOUR_LABEL: "light", agent_image.FREEZE_SHA_LABEL: "ab" * 32,
              agent_image.DPKG_SHA_LABEL: "cd" * 32, agent_image.FREEZE_LABEL: "numpy==1.26.4"}
    environment = {"flavour": "light", "pip_freeze_sha256": "ab" * 32, "dpkg_sha256": "cd" * 32}
    assert image_environment(labels) == environment and image_environment({}) == {}
    described = {"backend": "docker", "image": "img", "image_id": "sha256:" + "e" * 64,
                 "image_environment": environment}
    spec = SimpleNamespace(data_dir=tmp_path, image="img", gpus=())
    job = SimpleNamespace(agent=SimpleNamespace(name="a", command=["x"], image=""), agent_version="v", agent_image="",
                          model_name="", settings={}, gpus=0, gpu_type="", cpus=1, memory_gb=1, time_limit_s=60,
                          network=None)
    task = SimpleNamespace(job=job, competition=SimpleNamespace(slug="c"), seed=3, runner=None)
    recipe = recipes.build(task, spec, SimpleNamespace(name="docker", describe=lambda spec: dict(described)))
    assert recipe["agent"]["image_id"] == "sha256:" + "e" * 64 and recipe["agent"]["environment"] == environment
    assert "image_environment" not in recipe["sandbox"]


def _docker(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=900)
    if check:
        assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    return done


def _in_image(image: str, command: str, *options: str) -> str:
    name = f"medalboard-test-env-{uuid.uuid4().hex[:8]}"
    return _docker("run", "--rm", "--name", name, *options, image, "sh", "-c", command).stdout


@pytest.mark.docker
def test_the_light_image_holds_what_its_recipe_pins_and_records_it(mlebench_env):
    import docker

    labels = docker.from_env().images.get(mlebench_env).labels
    assert labels[agent_image.FLAVOUR_LABEL] == "light"
    recorded = _in_image(mlebench_env, f"cat /{agent_image.CONTENTS_DIR}/pip-freeze.txt", "--network", "none")
    live = _in_image(mlebench_env, "/opt/conda/envs/agent/bin/python -m pip freeze --all", "--network", "none")
    assert recorded == live and " ".join(live.split()) == labels[agent_image.FREEZE_LABEL]
    freeze = _freeze(live)
    assert {name: freeze.get(name) for name in _pins("light.txt")} == _pins("light.txt")
    assert "torch" not in freeze and "tensorflow" not in freeze
    dpkg = _in_image(mlebench_env, "dpkg-query -W -f '${Package}=${Version}\\n'", "--network", "none")
    assert dpkg == _in_image(mlebench_env, f"cat /{agent_image.CONTENTS_DIR}/dpkg.txt", "--network", "none")
    assert "python3=" in dpkg and "python3-scipy=" not in dpkg  # the libraries are the pinned wheels
    _in_image(mlebench_env, "/opt/conda/envs/agent/bin/python -m pip check", "--network", "none")


@pytest.mark.docker
def test_dpkg_is_consistent_and_an_agents_apt_get_install_works(mlebench_env):
    _in_image(mlebench_env, agent_image.DPKG_CHECK, "--network", "none", "--user", "0")
    # The check the build runs fails where dpkg is left as the old purge left it.
    name = f"medalboard-test-env-{uuid.uuid4().hex[:8]}"
    broken = _docker("run", "--rm", "--name", name, "--network", "none", "--user", "0", mlebench_env, "sh", "-c",
                     f"dpkg --purge --force-depends libcurl4 >/dev/null 2>&1; {agent_image.DPKG_CHECK}", check=False)
    assert broken.returncode != 0 and "curl : Depends: libcurl4" in broken.stdout + broken.stderr
    # As MLE-bench's aide Dockerfile does, where the build network reaches the mirror (the host's here):
    # its two small packages installed for real, and its ffmpeg (about 100 packages, most of a minute to
    # fetch and unpack) resolved against the image's dpkg state, which is what a broken state would fail.
    installed = _in_image(mlebench_env, "apt-get update -q >/dev/null && apt-get install -y -q libsm6 libxext6 "
                          ">/dev/null && dpkg --audit && apt-get check -q >/dev/null && dpkg -s libsm6 | grep Status"
                          " && apt-get install -s -q ffmpeg | grep -c '^Inst '", "--network", "host", "--user", "0")
    status, planned = installed.split("\n")[:2]
    assert status == "Status: install ok installed" and int(planned) > 20, installed

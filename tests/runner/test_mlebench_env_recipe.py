"""mlebench-env's recipe is MLE-bench's: the full flavour installs every pin of MLE-bench's
requirements (runner/agents/requirements/mlebench.txt, the same lines as MLE-bench's own
environment/requirements.txt and Dockerfile where a checkout is at hand) and its system packages, the
light flavour a subset at the same pins. A built image (the light one, marker docker) holds what its
recipe pins, as `pip freeze` in it says, records that freeze and its dpkg list, keeps dpkg consistent
so an agent's `apt-get install` works, and a run in it records the flavour and the image's id.

The full image takes half an hour or more to build and ~11 GB, too much for every CI run: its `pip
freeze`, recorded from an image built from the current recipe (`build_agent_image --mlebench-env
--flavour full --record`, runner/agents/recorded/), is checked against the pins instead, in well
under a second; the recorded revision must be the recipe's, so a recipe change needs a new record."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from runner.agents import base_image
from runner.backends.docker import image_environment
from runner.host import agent_image
from runner.host.agent_image import ImageBuildError
from runner.jobs import recipes

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


def _release(version: str) -> tuple:
    """A version as `==` compares it (PEP 440): the local label (+cu121) left out, trailing zeros too
    (2.17 == 2.17.0); a version that is not plain dotted numbers compares as written."""
    public = version.split("+", 1)[0]
    if not re.fullmatch(r"\d+(\.\d+)*", public):
        return (public,)
    parts = [int(part) for part in public.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _unmet(pins: dict[str, str], freeze: dict[str, str]) -> dict[str, tuple[str, str | None]]:
    """Each pin the freeze does not satisfy: {name: (pinned, frozen or None)}."""
    return {name: (pin, freeze.get(name)) for name, pin in pins.items()
            if name not in freeze or _release(freeze[name]) != _release(pin)}


def _recorded(flavour: str) -> tuple[dict, str, str]:
    folder = base_image.RECORDED / f"{base_image.TAG}-{flavour}"
    facts = json.loads((folder / "image.json").read_text())
    return facts, (folder / "pip-freeze.txt").read_text(), (folder / "dpkg.txt").read_text()


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


def test_a_version_meets_a_pin_as_pips_double_equals_does():
    pins = {"torch": "2.2.0", "tensorflow": "2.17", "librosa": "0.10.2.post1", "numpy": "1.26.4"}
    freeze = {"torch": "2.2.0+cu121", "tensorflow": "2.17.0", "librosa": "0.10.2.post1", "numpy": "1.26.4"}
    assert _unmet(pins, freeze) == {}
    assert _unmet(pins, {**freeze, "torch": "2.2.1", "numpy": "1.26.40"}) == {"torch": ("2.2.0", "2.2.1"),
                                                                               "numpy": ("1.26.4", "1.26.40")}
    assert _unmet({**pins, "keras": "3.5.0"}, freeze) == {"keras": ("3.5.0", None)}
    assert _unmet({"librosa": "0.10.2"}, freeze) == {"librosa": ("0.10.2", "0.10.2.post1")}


@pytest.mark.parametrize("flavour", ["full", "light"])
def test_the_recorded_freeze_of_each_flavour_holds_every_pin_of_its_recipe(flavour):
    """What `build_agent_image --mlebench-env --flavour F --record` copied out of an image built here."""
    facts, freeze, dpkg = _recorded(flavour)
    recipe = base_image.recipe(flavour)
    assert facts["recipe_revision"] == recipe.revision, (
        f"the {flavour} recipe changed since its freeze was recorded: build it and record it again "
        f"(manage.py build_agent_image --mlebench-env --flavour {flavour} --force --record)")
    assert facts["flavour"] == flavour
    assert (facts["pip_freeze_sha256"], facts["dpkg_sha256"]) == (hashlib.sha256(freeze.encode()).hexdigest(),
                                                                  hashlib.sha256(dpkg.encode()).hexdigest())
    frozen = _freeze(freeze)
    assert len(frozen) == len(freeze.split()) == facts["pip_packages"]  # every line an exact version
    files = ["mlebench.txt", "mlebench-heavy.txt"] if flavour == "full" else ["light.txt"]
    pins = {name: version for file in files for name, version in _pins(file).items()}
    assert _unmet(pins, frozen) == {}
    assert frozen["wheel"] == "0.44.0" if flavour == "full" else "torch" not in frozen
    assert facts["python"].startswith("3.11.")  # MLE-bench's PYTHON_VERSION
    packages = {line.split("=", 1)[0] for line in dpkg.split()}
    assert set(recipe.apt_packages) | set(recipe.packages) <= packages, set(recipe.apt_packages) - packages
    if flavour == "full":
        # tensorflow[and-cuda]'s extra: the CUDA libraries as wheels; torch's CUDA build (the +cu local label).
        assert {"nvidia-cudnn-cu12", "nvidia-cublas-cu12", "nvidia-nccl-cu12"} <= set(frozen)
        assert frozen["torch"].startswith("2.2.0")


def test_the_full_recipe_is_mlebench_requirements_and_dockerfile_installs():
    """Against MLE-bench's own files, where a checkout is named (.ci/run sets it from a local mirror)."""
    checkout = Path(os.environ.get("MEDALBOARD_MLEBENCH_DIR", "") or "/nonexistent")
    if not (checkout / "environment" / "requirements.txt").is_file():
        pytest.skip("MEDALBOARD_MLEBENCH_DIR does not name an MLE-bench checkout")
    theirs = [line.strip() for line in (checkout / "environment/requirements.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    ours = [line for line in (base_image.REQUIREMENTS / "mlebench.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert ours == theirs
    dockerfile = (checkout / "environment/Dockerfile").read_text()
    installs = re.findall(r"conda run -n \$\{CONDA_ENV_NAME\} pip install ([^&\n]+?)\s*(?:&&|\\|$)", dockerfile,
                          re.M)
    heavy = [line for line in (base_image.REQUIREMENTS / "mlebench-heavy.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert installs == ["-r /tmp/requirements.txt", *heavy]
    assert [" ".join(step) for step in base_image.PIP_STEPS["full"][2:]] == heavy
    apt = re.search(r"apt-get install -y([^&]+)", dockerfile).group(1).replace("\\", " ").split()
    assert tuple(apt) == base_image.MLEBENCH_APT  # Ubuntu's names are Debian's for these


@pytest.mark.docker
@pytest.mark.parametrize("flavour", ["full", "light"])
def test_the_recorded_freeze_is_what_the_recorded_image_holds(flavour):
    """Where the image the record was made from is on this Docker host (by its id), the record is its."""
    import docker

    facts, freeze, dpkg = _recorded(flavour)
    try:
        docker.from_env().images.get(facts["image_id"])
    except docker.errors.ImageNotFound:
        pytest.skip(f"the recorded {flavour} image {facts['image_id'][:19]} is not on this host")
    image = facts["image_id"]
    assert _in_image(image, f"cat /{agent_image.CONTENTS_DIR}/pip-freeze.txt", "--network", "none") == freeze
    live = _in_image(image, "/opt/conda/envs/agent/bin/python -m pip freeze --all", "--network", "none")
    assert live == freeze
    assert _in_image(image, "dpkg-query -W -f '${Package}=${Version}\\n'", "--network", "none") == dpkg


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
def test_record_copies_what_the_image_recorded_and_refuses_another_images(mlebench_env, tmp_path):
    import docker

    folder = base_image.record(mlebench_env, {"built": True, "seconds": 1.5}, dest=tmp_path)
    assert folder == tmp_path / "mlebench-env-light"
    facts = json.loads((folder / "image.json").read_text())
    image = docker.from_env().images.get(mlebench_env)
    assert facts["image_id"] == image.id and facts["recipe_revision"] == base_image.RECIPE.revision
    assert facts["build"] == {"built": True, "seconds": 1.5} and facts["python"].startswith("3.11.")
    live = _in_image(mlebench_env, "/opt/conda/envs/agent/bin/python -m pip freeze --all", "--network", "none")
    assert (folder / "pip-freeze.txt").read_text() == live
    assert facts["pip_freeze_sha256"] == image.labels[agent_image.FREEZE_SHA_LABEL]
    # An image whose recorded files are not what its labels sum up (changed after the build) is refused.
    name = f"medalboard-test-env-{uuid.uuid4().hex[:8]}"
    _docker("run", "--name", name, "--user", "0", "--network", "none", mlebench_env, "sh", "-c",
            f"echo extra==1.0 >> /{agent_image.CONTENTS_DIR}/pip-freeze.txt")
    tampered = f"medalboard-test-env:{name}"
    try:
        _docker("commit", name, tampered)
        with pytest.raises(ImageBuildError, match="not the one its labels sum up"):
            base_image.record(tampered, dest=tmp_path / "other")
        assert not (tmp_path / "other").exists()
    finally:
        _docker("rm", "-f", name, check=False)
        _docker("rmi", tampered, check=False)


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

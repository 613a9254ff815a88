"""The `mlebench-env` image that MLE-bench agents' Dockerfiles start FROM, in two flavours.

MLE-bench's own base is Ubuntu with Miniconda, its system packages and, in the `agent` conda
environment, its pinned requirements (requirements/mlebench.txt, then requirements/mlebench-heavy.txt's
installs). Ours is the site's debootstrapped Debian (runner.host.agent_image) with what those Dockerfiles and
start scripts rely on: the user `nonroot`, /home/data and /home/submission (the sandbox adds logs,
code and agent), a root-only /private, an environment named `agent` (a venv of Debian's Python 3.11
at /opt/conda/envs/agent) and a `conda` on PATH that covers the commands they use
(runner.agents.conda_shim), plus curl (validate_submission.sh) and envsubst (their prompts).

- `full`: MLE-bench's system packages (git, build-essential, ffmpeg, libsm6, libxext6, p7zip, tmux,
  ...) and every pin of MLE-bench's requirements, torch and TensorFlow included: its world.
- `light`: the few system packages the sandbox needs and requirements/light.txt, a subset of the
  same pins (numpy, pandas, scipy, scikit-learn); for tests and small sites, and named on every run.

Both take their Python packages from the operator's index (pip in the root filesystem, on this host's
network; PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_TRUSTED_HOST and the proxy variables are passed on)
into a wheelhouse kept on the host (WHEELHOUSE), so a rebuild of the same requirements is a cache hit
that needs no index at all. Both keep a
consistent dpkg: an agent's `apt-get install` works where its build network reaches the mirror.

    python manage.py build_agent_image --mlebench-env [--flavour full] [--record]

`--record` copies what a built image recorded of itself (its `pip freeze`, its dpkg list, its id, size
and recipe revision) into runner/agents/recorded/mlebench-env-FLAVOUR/, data the project commits: the
recipe tests check the recorded full freeze against MLE-bench's pins without building it.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from runner.host import agent_image
from runner.host.agent_image import ImageBuildError, Recipe

TAG = "mlebench-env"
USER = "nonroot"
SEED_HOME = "/usr/local/share/medalboard/home"  # a copy of the image's /home (runner.agents.images)
CONDA_ROOT = "/opt/conda"
AGENT_ENV = f"{CONDA_ROOT}/envs/agent"
SHIM = Path(__file__).resolve().parent / "conda_shim.py"
PACKAGES = ("python3", "python3-venv", "python-is-python3", "ca-certificates", "curl", "gettext-base", "unzip",
            "zip", "procps")
# MLE-bench's environment/Dockerfile `apt-get install` list, as Debian names them (`gettext` brings
# envsubst as on Ubuntu); installed without recommends.
MLEBENCH_APT = ("curl", "wget", "git", "vim", "nano", "unzip", "zip", "p7zip-full", "python3", "python3-pip",
                "python3-venv", "python3-dev", "python-is-python3", "build-essential", "openssh-server", "tmux",
                "gettext", "sudo", "ffmpeg", "libsm6", "libxext6")
REQUIREMENTS = Path(__file__).resolve().parent / "requirements"
# What a built image recorded of itself, one folder per flavour (record()); not part of any recipe.
RECORDED = Path(__file__).resolve().parent / "recorded"
# Each flavour's pip installs into the `agent` environment, in order: one list of pip arguments each.
REQUIREMENTS_IN_ROOTFS = "tmp/requirements"
PIP_STEPS = {
    "light": (("-r", f"/{REQUIREMENTS_IN_ROOTFS}/light.txt"),),
    # A conda environment comes with `wheel`, a venv without: setup.py-only sdists among MLE-bench's pins
    # (bayespy, kaggle, rouge-score, efficientnet-pytorch, ...) need it for `pip wheel`.
    "full": (("wheel==0.44.0",), ("-r", f"/{REQUIREMENTS_IN_ROOTFS}/mlebench.txt"),
             *(tuple(line.split()) for line in (REQUIREMENTS / "mlebench-heavy.txt").read_text().splitlines()
               if line.strip() and not line.startswith("#"))),
}
# Passed from this host's environment to pip in the root filesystem: where packages come from.
PIP_ENV = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
           "http_proxy", "https_proxy", "no_proxy")
WHEELHOUSE = Path(os.environ.get("MEDALBOARD_WHEELHOUSE_DIR", "/var/cache/medalboard/wheelhouse"))
WHEELHOUSE_IN_ROOTFS = "var/cache/medalboard-wheelhouse"
# pip in the build trusts the certificates this host's pip trusts (an operator's index or TLS proxy
# may have its own CA); the bundle is in the root filesystem only during the installs.
HOST_CA_BUNDLES = ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")
CA_IN_ROOTFS = "tmp/medalboard-host-ca.pem"
ACTIVATE = f'eval "$({CONDA_ROOT}/bin/conda shell.bash activate "${{1:-base}}")"\n'
PROFILE = f'eval "$({CONDA_ROOT}/bin/conda shell.bash hook)"\n'
PIP_CONF = "[global]\ndisable-pip-version-check = true\nno-input = true\n"
# As the sandbox runs it: the user, the conda commands the agents use, their libraries, the tools.
SELF_CHECK = f"""set -eu
test "$(id -un)" = {USER}
eval "$(conda shell.bash hook)"
conda activate agent
test "$(command -v python)" = {AGENT_ENV}/bin/python
python -c 'import numpy, pandas, scipy, sklearn'
conda run -n agent --no-capture-output python -c 'import sys; assert sys.prefix == "{AGENT_ENV}"'
conda install -y -n agent numpy pandas scikit-learn
conda clean -afy
conda deactivate
source {CONDA_ROOT}/bin/activate agent && test "$CONDA_DEFAULT_ENV" = agent
command -v curl envsubst unzip >/dev/null
if ls /private >/dev/null 2>&1; then echo '/private is readable'; exit 1; fi
echo mlebench-env ok
"""


def builds_images(runner) -> bool:
    """Whether a registered runner (a runner.models.Runner) builds packaged agents' images itself: an
    API runner on Docker whose engine has this base (it reports tags as Docker lists them:
    `mlebench-env:latest`)."""
    bases = {TAG, f"{TAG}:latest"}
    return bool(runner.token_hash) and runner.backend == "docker" and bool(bases & set(runner.images))


def finish(rootfs: Path, *, flavour: str) -> None:
    """The `agent` venv with the flavour's requirements, the conda shim and its activate scripts,
    /private, pip's offline manners."""
    agent_image._run(["chroot", str(rootfs), "/usr/bin/python3", "-m", "venv", AGENT_ENV],
                     "making the agent environment")
    install_requirements(rootfs, PIP_STEPS[flavour])
    conda_bin = rootfs / CONDA_ROOT.lstrip("/") / "bin"
    conda_bin.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SHIM, conda_bin / "conda")
    (conda_bin / "activate").write_text(ACTIVATE)
    (conda_bin / "deactivate").write_text(f'eval "$({CONDA_ROOT}/bin/conda shell.bash deactivate)"\n')
    for name in ("conda", "activate", "deactivate"):
        os.chmod(conda_bin / name, 0o755)
    profile = rootfs / CONDA_ROOT.lstrip("/") / "etc/profile.d"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "conda.sh").write_text(PROFILE)
    (rootfs / "etc/pip.conf").write_text(PIP_CONF)
    (rootfs / "private").mkdir(mode=0o700, exist_ok=True)


def install_requirements(rootfs: Path, steps: tuple[tuple[str, ...], ...]) -> None:
    """pip in the root filesystem, one install per step, from the host's wheelhouse (moved in and out:
    nothing of it stays in the image; one build at a time holds it). A step the wheelhouse already
    holds, by the sha256 of its arguments and requirement files, installs with --no-index: no
    network at all; another is first fetched into it with `pip wheel` from the operator's index."""
    WHEELHOUSE.parent.mkdir(parents=True, exist_ok=True)
    with open(WHEELHOUSE.parent / "wheelhouse.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        inside = rootfs / WHEELHOUSE_IN_ROOTFS
        inside.parent.mkdir(parents=True, exist_ok=True)
        if WHEELHOUSE.is_dir():
            shutil.move(WHEELHOUSE, inside)
        (inside / "steps").mkdir(parents=True, exist_ok=True)
        shutil.copytree(REQUIREMENTS, rootfs / REQUIREMENTS_IN_ROOTFS)
        shutil.copyfile(host_ca_bundle(), rootfs / CA_IN_ROOTFS)
        try:
            for step in steps:
                done = inside / "steps" / _step_key(step)
                if not done.exists():
                    _pip(rootfs, "wheel", "--wheel-dir", f"/{WHEELHOUSE_IN_ROOTFS}", *step)
                    done.write_text(" ".join(step) + "\n")
                _pip(rootfs, "install", "--no-index", *step)
        finally:
            shutil.rmtree(WHEELHOUSE, ignore_errors=True)
            shutil.move(inside, WHEELHOUSE)
            shutil.rmtree(rootfs / REQUIREMENTS_IN_ROOTFS)
            (rootfs / CA_IN_ROOTFS).unlink()


def _step_key(step: tuple[str, ...]) -> str:
    named = [arg for arg in step if arg.startswith(f"/{REQUIREMENTS_IN_ROOTFS}/")]
    files = [(REQUIREMENTS / Path(arg).name).read_bytes() for arg in named]
    return hashlib.sha256(repr((step, files)).encode()).hexdigest()


def host_ca_bundle(*, required: bool = True) -> str:
    """The CA bundle this host's pip trusts ("" if none and not `required`)."""
    named = [os.environ[name] for name in HOST_CA_BUNDLES if os.environ.get(name)]
    found = next((path for path in [*named, "/etc/ssl/certs/ca-certificates.crt"] if os.path.isfile(path)), None)
    if found is None and not required:
        return ""
    if found is None:
        raise ImageBuildError("no CA bundle on this host for pip to trust (PIP_CERT, REQUESTS_CA_BUNDLE, "
                              "SSL_CERT_FILE or /etc/ssl/certs/ca-certificates.crt)")
    return found


def _pip(rootfs: Path, command: str, *args: str) -> None:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8", "PIP_NO_CACHE_DIR": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "PIP_CERT": f"/{CA_IN_ROOTFS}",
           "PIP_FIND_LINKS": f"/{WHEELHOUSE_IN_ROOTFS}",
           **{name: os.environ[name] for name in PIP_ENV if os.environ.get(name)}}
    done = subprocess.run(["chroot", str(rootfs), f"{AGENT_ENV}/bin/python", "-m", "pip", command, "--progress-bar",
                           "off", *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise ImageBuildError(f"pip {command} {' '.join(args)} in the agent environment failed with exit code "
                              f"{done.returncode}:\n{(done.stderr or done.stdout)[-3000:]}")


def _revision(*parts) -> str:
    """What finish() writes and the layout, as a fingerprint: a host whose mlebench-env came from an
    older recipe builds it again instead of keeping it by its tag."""
    return hashlib.sha256(repr((SHIM.read_bytes(), *parts)).encode()).hexdigest()[:16]


# As MLE-bench's base: /home/submission, and /home/data to mount on. logs, code and agent are the
# agent's Dockerfile's to make (MLE-bench's aide and mlagentbench `RUN mkdir` them without -p, which
# fails on a folder that exists); the sandbox mounts logs and code and seeds agent at run time.
FOLDERS = ("home/data", "home/submission", "opt/medalboard")


def recipe(flavour: str) -> Recipe:
    if flavour not in PIP_STEPS:
        raise ImageBuildError(f"no mlebench-env flavour {flavour!r} ({' or '.join(PIP_STEPS)})")
    requirements = tuple((REQUIREMENTS / name).read_bytes() for name in sorted(os.listdir(REQUIREMENTS)))
    apt = MLEBENCH_APT if flavour == "full" else ()
    return Recipe(
        packages=PACKAGES,
        apt_packages=apt,
        self_check=("bash", "-c", SELF_CHECK),
        user=USER,
        folders=FOLDERS,
        finish=functools.partial(finish, flavour=flavour),
        env={"PATH": f"{CONDA_ROOT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
             "CONDA_ENV_NAME": "agent"},
        changes=("WORKDIR /home", 'CMD ["bash"]'),
        revision=_revision(FOLDERS, ACTIVATE, PROFILE, PIP_CONF, SELF_CHECK, PACKAGES, apt, AGENT_ENV, flavour,
                           PIP_STEPS[flavour], requirements),
        flavour=flavour,
        python=f"{AGENT_ENV}/bin/python",
    )


FLAVOURS = tuple(PIP_STEPS)
RECIPE = recipe("light")  # what tests and CI build as `mlebench-env`


def record(tag: str, built: dict | None = None, dest: Path = RECORDED) -> Path:
    """Copy what the image `tag` recorded of itself at its build (agent_image.CONTENTS_DIR) into
    dest/mlebench-env-FLAVOUR/: pip-freeze.txt and dpkg.txt as the image holds them, and image.json (its
    id, size, recipe revision, the sha256 labels, Python's version and, given `built`, the build's own
    report). The freeze must be the one its label sums up: a copy of another image's is refused."""
    import docker

    image = docker.from_env().images.get(tag)
    labels = image.labels or {}
    flavour = labels.get(agent_image.FLAVOUR_LABEL, "")
    if flavour not in PIP_STEPS:
        raise ImageBuildError(f"{tag} is not an mlebench-env image (its label {agent_image.FLAVOUR_LABEL} is "
                              f"{flavour!r})")
    inside = f"cat /{agent_image.CONTENTS_DIR}/pip-freeze.txt; echo '#--'; cat /{agent_image.CONTENTS_DIR}/dpkg.txt; " \
             f"echo '#--'; {AGENT_ENV}/bin/python -c 'import platform; print(platform.python_version())'"
    out = agent_image._run(["docker", "run", "--rm", "--network", "none", "--user", "0", tag, "sh", "-c", inside],
                           f"reading what {tag} recorded")
    freeze, dpkg, python = out.split("#--\n")
    digest = lambda text: hashlib.sha256(text.encode()).hexdigest()  # noqa: E731
    if (digest(freeze), digest(dpkg)) != (labels.get(agent_image.FREEZE_SHA_LABEL),
                                          labels.get(agent_image.DPKG_SHA_LABEL)):
        raise ImageBuildError(f"{tag}'s recorded pip freeze or dpkg list is not the one its labels sum up")
    folder = dest / f"{TAG}-{flavour}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pip-freeze.txt").write_text(freeze)
    (folder / "dpkg.txt").write_text(dpkg)
    facts = {"tag": tag, "image_id": image.id, "created": image.attrs.get("Created", ""), "flavour": flavour,
             "recipe_revision": labels.get(agent_image.REVISION_LABEL, ""),
             "size_bytes": int(image.attrs.get("Size", 0)), "python": python.strip(),
             "apt_source": labels.get("medalboard.apt-source", ""), "pip_freeze_sha256": digest(freeze),
             "dpkg_sha256": digest(dpkg), "pip_packages": len(freeze.split()), "debian_packages": len(dpkg.split()),
             "build": built if built and built.get("built") else None}
    (folder / "image.json").write_text(json.dumps(facts, indent=2) + "\n")
    return folder

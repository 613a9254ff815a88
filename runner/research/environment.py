"""What a research task's starter and eval.py run in: MLAgentBench's requirements, the same on every backend.

    env = environment.for_backend(backend)   # Environment(flavour, image, python, bin_dir)
    spec = SandboxSpec(..., image=env.image, bin_dir=env.bin_dir, command=[env.python, "train.py"])

MLAgentBench installs its requirements.txt and install.sh into one conda environment; here they are
data (requirements/<flavour>.txt: `light`, a locked subset with torch's CPU build, or `full`, every
package pinned), and one wheelhouse is made of a file with `pip download` on the runner (the operator's
index, mirror and proxy, as for mlebench-env), kept under settings.RESEARCH_ENV_DIR by the file's
sha256. Those very wheels are then installed, with no index at all:

- local backend: a venv of the runner's base Python (never the runner's own venv, whose numpy and
  friends are the site's), `<RESEARCH_ENV_DIR>/venv-<flavour>-<hash>/`;
- Docker: the image `medalboard-research:<flavour>-<hash>`, FROM mlebench-env (MLE-bench's world: Python
  3.11, a working apt), with a venv at /opt/mlagentbench first on PATH.

Each is built once, under a lock (concurrent workers wait for the first), atomically (a half-built one
is never used), and records its `pip freeze` (the venv's medalboard-freeze.txt, the image's labels), so
a test compares the two. settings.RESEARCH_ENVIRONMENT "none" keeps the agent image and the runner's
Python (the test suite's default: building costs minutes).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

REQUIREMENTS = Path(__file__).resolve().parent / "requirements"
FILES = {"light": "light.txt", "full": "mlagentbench.txt"}
IMAGE = "medalboard-research"
BASE_IMAGE = "mlebench-env"  # runner.agents.base_image.TAG: `build_agent_image --mlebench-env`
VENV_IN_IMAGE = "/opt/mlagentbench"
FREEZE = "medalboard-freeze.txt"
FREEZE_ARGS = ("freeze", "--all", "--exclude", "pip")  # pip itself is the interpreter's, not the requirements'
FLAVOUR_LABEL = "medalboard.env.flavour"  # as mlebench-env names its own (runner.host.agent_image)
FREEZE_SHA_LABEL = "medalboard.env.pip-freeze-sha256"
FREEZE_LABEL = "medalboard.env.pip-freeze"
PIP_TIMEOUT_S = 3600
OFFLINE_RUN = ("docker", "run", "--rm", "--network", "none")
DOCKERFILE = f"""FROM {BASE_IMAGE}
USER root
COPY requirements.txt /tmp/research/requirements.txt
COPY wheelhouse /tmp/research/wheelhouse
RUN python3 -m venv {VENV_IN_IMAGE} && \\
    {VENV_IN_IMAGE}/bin/pip install --no-index --find-links /tmp/research/wheelhouse --no-cache-dir \\
        --disable-pip-version-check -r /tmp/research/requirements.txt && \\
    {VENV_IN_IMAGE}/bin/pip {" ".join(FREEZE_ARGS)} > {VENV_IN_IMAGE}/{FREEZE} && rm -rf /tmp/research
ENV PATH={VENV_IN_IMAGE}/bin:/opt/conda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
"""


class EnvironmentUnavailable(Exception):
    """The research environment could not be made; the message says which step and why."""


@dataclass(frozen=True)
class Environment:
    flavour: str  # "light", "full", or "none"
    image: str  # the Docker image the sandbox starts from (ignored by the local backend)
    python: str  # the interpreter inside the sandbox
    bin_dir: str = ""  # first on the sandbox's PATH on the local backend ("" : the runner's)


def for_backend(backend, flavour: str | None = None) -> Environment:
    """The research environment `flavour` (settings.RESEARCH_ENVIRONMENT unless given: a remote runner
    is told the site's in its claim) on `backend`, built if it is not yet."""
    flavour = flavour or settings.RESEARCH_ENVIRONMENT
    if flavour == "none":
        python = sys.executable if backend.name == "local" else "python3"
        return Environment("none", settings.MEDALBOARD_AGENT_IMAGE, python)
    if backend.name == "local":
        venv = local_venv(flavour)
        return Environment(flavour, "", str(venv / "bin" / "python"), str(venv / "bin"))
    return Environment(flavour, docker_image(flavour, backend.client), f"{VENV_IN_IMAGE}/bin/python")


def requirements(flavour: str) -> Path:
    if flavour not in FILES:
        raise EnvironmentUnavailable(f"no research environment {flavour!r} ({' or '.join(FILES)})")
    return REQUIREMENTS / FILES[flavour]


def digest(flavour: str) -> str:
    """The requirements file's sha256 with how it is installed: a changed pin or recipe is a new environment."""
    return hashlib.sha256(requirements(flavour).read_bytes() + DOCKERFILE.encode()).hexdigest()[:16]


def wheelhouse(flavour: str) -> Path:
    """Every wheel the flavour installs, fetched once with the runner's pip configuration."""
    target = settings.RESEARCH_ENV_DIR / f"wheels-{flavour}-{digest(flavour)}"
    with _built(target) as scratch:
        if scratch is not None:
            _run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--only-binary=:all:",
                    "--disable-pip-version-check",
                    "--no-input",
                    "-d",
                    str(scratch),
                    "-r",
                    str(requirements(flavour)),
                ],
                f"fetching the {flavour} research environment's wheels",
            )
    return target


def local_venv(flavour: str) -> Path:
    """A venv of the runner's base Python holding exactly the flavour's wheels. Its paths are absolute,
    so it is made where it lives; its freeze, written last, marks it finished (a build that died
    half-way is made again)."""
    target = settings.RESEARCH_ENV_DIR / f"venv-{flavour}-{digest(flavour)}"
    wheels = wheelhouse(flavour)
    with _locked(target):
        if (target / FREEZE).is_file():
            return target
        shutil.rmtree(target, ignore_errors=True)
        try:
            _run([base_python(), "-m", "venv", str(target)], "making the research venv")
            pip = [str(target / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "--no-input"]
            _run(
                [
                    *pip,
                    "install",
                    "--no-index",
                    "--no-cache-dir",
                    "--find-links",
                    str(wheels),
                    "-r",
                    str(requirements(flavour)),
                ],
                "installing the research environment",
            )
            (target / FREEZE).write_text(_run([*pip, *FREEZE_ARGS], "pip freeze"))
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
    return target


def base_python() -> str:
    """The interpreter the runner's venv was made from (the venv itself would lend the site's packages)."""
    return getattr(sys, "_base_executable", "") or sys.executable


def docker_image(flavour: str, client) -> str:
    """medalboard-research:<flavour>-<hash> on this Docker host, built FROM mlebench-env if missing."""
    import docker.errors

    tag = f"{IMAGE}:{flavour}-{digest(flavour)}"
    if _has_image(client, tag):
        return tag
    try:
        client.images.get(BASE_IMAGE)
    except docker.errors.ImageNotFound:
        raise EnvironmentUnavailable(
            f"the research environment is built FROM {BASE_IMAGE}, which this Docker host "
            "lacks: python manage.py build_agent_image --mlebench-env"
        ) from None
    wheels = wheelhouse(flavour)
    with _locked(settings.RESEARCH_ENV_DIR / f"{IMAGE}-{flavour}"), tempfile.TemporaryDirectory() as context:
        if _has_image(client, tag):  # another worker built it while this one waited
            return tag
        shutil.copytree(wheels, Path(context) / "wheelhouse", copy_function=_link_or_copy)
        shutil.copyfile(requirements(flavour), Path(context) / "requirements.txt")
        (Path(context) / "Dockerfile").write_text(DOCKERFILE)
        _run(["docker", "build", "--network", "none", "-q", "-t", f"{tag}-building", context], f"building {tag}")
        read = [*OFFLINE_RUN, "--entrypoint", "cat", f"{tag}-building", f"{VENV_IN_IMAGE}/{FREEZE}"]
        freeze = _run(read, "reading the image's pip freeze")
        labels = {
            FLAVOUR_LABEL: f"mlagentbench-{flavour}",
            FREEZE_LABEL: " ".join(freeze.split()),
            FREEZE_SHA_LABEL: hashlib.sha256(freeze.encode()).hexdigest(),
        }
        (Path(context) / "Dockerfile.labels").write_text(f"FROM {tag}-building\n")
        _run(
            [
                "docker",
                "build",
                "--network",
                "none",
                "-q",
                "-f",
                str(Path(context) / "Dockerfile.labels"),
                *(arg for name, value in labels.items() for arg in ("--label", f"{name}={value}")),
                "-t",
                tag,
                context,
            ],
            f"labelling {tag}",
        )
        subprocess.run(["docker", "rmi", f"{tag}-building"], capture_output=True)
    return tag


def _has_image(client, tag: str) -> bool:
    import docker.errors

    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def image_freeze(client, tag: str) -> str:
    return (client.images.get(tag).labels or {}).get(FREEZE_LABEL, "")


@contextlib.contextmanager
def _built(target: Path):
    """Yields a scratch folder to build `target` in (renamed to it afterwards), or None if it exists."""
    with _locked(target):
        if target.exists():
            yield None
            return
        scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            yield scratch
            if not target.exists():
                scratch.rename(target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def _locked(target: Path):
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _link_or_copy(source: str, destination: str) -> None:
    try:
        Path(destination).hardlink_to(source)
    except OSError:
        shutil.copy2(source, destination)


def _run(command: list[str], step: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentUnavailable(f"{step} failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-3000:]
        raise EnvironmentUnavailable(f"{step} failed with exit code {done.returncode}:\n{tail}")
    return done.stdout

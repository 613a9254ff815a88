"""The agent base image: a Debian root filesystem made with debootstrap, turned into an image.

No image registry is reachable from a runner, so the image is built on the machine itself from
Debian's own packages: `debootstrap --variant=minbase` with python3 and Debian's numpy, pandas,
scipy and scikit-learn, then `tar | docker import`. The package mirror and suite are read from the
machine's own apt configuration (one-line `.list` files and deb822 `.sources` files), never written
into the code, so the build uses whatever mirror (or snapshot, or proxy) the machine already trusts.

    python manage.py build_agent_image [--tag medalboard-agent:bookworm] [--force]
    python manage.py build_agent_image --mlebench-env   # the base of MLE-bench agents (runner.agents.base_image)

What differs between the two images (packages, the user, a last step on the root filesystem, the
self-check, the image's settings) is a Recipe; the steps are the same.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

APT_DIR = Path("/etc/apt")
PACKAGES = (
    "python3",
    "python3-numpy",
    "python3-pandas",
    "python3-scipy",
    "python3-sklearn",
    "ca-certificates",  # an agent that opts into an egress network talks TLS to its LLM API
)
# Nothing is purged after the build (Debian's scipy declares pythran, hence gcc and Python's headers,
# as a dependency): a purge with --force-depends left dpkg inconsistent, and every `apt-get install`
# in an agent's Dockerfile then failed with "Unmet dependencies". Every image is checked for that
# (DPKG_CHECK) before it is kept.
DPKG_CHECK = 'out="$(dpkg --audit 2>&1)"; test -z "$out" || { echo "$out"; exit 1; }; apt-get check -q'
# Run in the new image as a sandbox would run it: the build fails unless the agent's libraries work.
SELF_CHECK = """
import numpy as np, pandas as pd, scipy.optimize
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
rng = np.random.default_rng(0)
X = pd.DataFrame(rng.normal(size=(200, 4)), columns=list("abcd"))
y = (X.a + X.b > 0).astype(int)
for model in (LogisticRegression(), RandomForestClassifier(n_estimators=20, random_state=0)):
    assert cross_val_score(model, X, y, cv=3).mean() > 0.8
print("agent image ok")
"""
# The agent runs as this uid inside the container unless the runner itself is not root (then the
# runner's own uid:gid, so files it writes into the bind mounts stay the runner's).
AGENT_UID = 1000
IMAGE_LABEL = "medalboard.agent-image"
REVISION_LABEL = "medalboard.recipe"
# What the image holds, as the build found it: the flavour, the pip freeze of `Recipe.python` (one
# line, space-separated) and sha256s of the freeze and of the dpkg list; the lists themselves are in
# the image at CONTENTS_DIR (pip-freeze.txt, dpkg.txt).
# (runner.backends.docker.IMAGE_ENV_LABELS reads them for a run's recipe.)
FLAVOUR_LABEL = "medalboard.env.flavour"
FREEZE_LABEL = "medalboard.env.pip-freeze"
FREEZE_SHA_LABEL = "medalboard.env.pip-freeze-sha256"
DPKG_SHA_LABEL = "medalboard.env.dpkg-sha256"
CONTENTS_DIR = "opt/medalboard/environment"


def _nothing_more(rootfs: Path) -> None:
    return None


@dataclass(frozen=True)
class Recipe:
    """What one image is made of, on top of Debian's minimal base."""

    packages: tuple[str, ...]
    self_check: tuple[str, ...]  # argv run in the new image as the sandbox user; must exit 0
    user: str = "agent"  # the name of uid AGENT_UID
    folders: tuple[str, ...] = ("home/data", "home/submission", "home/logs", "home/code", "opt/medalboard")
    finish: Callable[[Path], None] = _nothing_more  # a last step on the root filesystem
    changes: tuple[str, ...] = ("WORKDIR /home/code", 'CMD ["python3"]')  # `docker import --change`s
    env: dict[str, str] = field(default_factory=dict)
    # A fingerprint of what `finish` writes, kept as the image's label REVISION_LABEL: an image of the
    # tag with another one was built by an older recipe and is rebuilt ("" : the tag alone is the cache).
    revision: str = ""
    apt_packages: tuple[str, ...] = ()  # installed by apt-get in the root filesystem, after debootstrap
    flavour: str = ""  # named on the image (FLAVOUR_LABEL) and on every run in it
    python: str = ""  # the interpreter whose `pip freeze` the image records ("": none)


AGENT = Recipe(packages=PACKAGES, self_check=("python3", "-c", SELF_CHECK))


class ImageBuildError(Exception):
    """The image could not be built; the message says which step failed and how."""


@dataclass(frozen=True)
class AptSource:
    uri: str
    suite: str
    components: tuple[str, ...]
    signed_by: str = ""


def read_apt_sources(apt_dir: Path = APT_DIR) -> list[AptSource]:
    """Every enabled binary (`deb`) source of the machine, in apt's reading order."""
    files = [apt_dir / "sources.list"] if (apt_dir / "sources.list").is_file() else []
    parts = apt_dir / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources") and p.is_file())
    sources: list[AptSource] = []
    for path in files:
        text = path.read_text(errors="replace")
        sources += _deb822_sources(text) if path.suffix == ".sources" else _one_line_sources(text)
    return sources


def _one_line_sources(text: str) -> list[AptSource]:
    sources = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) < 3 or words[0] != "deb":
            continue
        words = words[1:]
        options = ""
        if words[0].startswith("["):  # deb [signed-by=... arch=...] URI SUITE COMPONENTS
            while words and not words[0].endswith("]"):
                options += " " + words.pop(0)
            options += " " + words.pop(0)
        if len(words) >= 2:
            signed = [o.split("=", 1)[1] for o in options.strip("[] ").split() if o.startswith("signed-by=")]
            sources.append(AptSource(words[0], words[1], tuple(words[2:]), signed[0] if signed else ""))
    return sources


def _deb822_sources(text: str) -> list[AptSource]:
    sources = []
    for stanza in _deb822_stanzas(text):
        if "deb" not in stanza.get("types", "").split() or stanza.get("enabled", "yes").lower() == "no":
            continue
        for uri in stanza.get("uris", "").split():
            for suite in stanza.get("suites", "").split():
                components = tuple(stanza.get("components", "").split())
                sources.append(AptSource(uri, suite, components, stanza.get("signed-by", "").strip()))
    return sources


def _deb822_stanzas(text: str) -> list[dict[str, str]]:
    stanzas, current, key = [], {}, None
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                stanzas.append(current)
            current, key = {}, None
        elif line[0] in " \t" and key:  # a continuation line (e.g. an inline Signed-By key)
            current[key] += "\n" + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            key = key.strip().lower()
            current[key] = value.strip()
    return stanzas


def base_source(sources: list[AptSource]) -> AptSource:
    """The machine's main Debian source: the first suite that is not -updates, -security, ... ."""
    for source in sources:
        if "-" not in source.suite and "/" not in source.suite and source.uri.startswith(("http", "file:")):
            return source
    raise ImageBuildError(
        "no base Debian suite found in /etc/apt/sources.list or /etc/apt/sources.list.d/ "
        "(need e.g. 'deb http://MIRROR/debian bookworm main')"
    )


def image_exists(image: str) -> bool:
    from runner.backends.docker import DockerBackend

    return DockerBackend().image_exists(image)


def image_revision(image: str) -> str:
    """The recipe revision the local image was built from ("" if it has none)."""
    from runner.backends.docker import DockerBackend

    return (DockerBackend().client.images.get(image).labels or {}).get(REVISION_LABEL, "")


def build(*, tag: str, force: bool = False, apt_dir: Path = APT_DIR, log=print, recipe: Recipe = AGENT) -> dict:
    """Build the image `tag` unless it exists from this recipe (or `force`); returns what was done and
    measured."""
    if not force and image_exists(tag):
        built_from = image_revision(tag) if recipe.revision else ""
        if built_from == recipe.revision:
            log(f"{tag} already exists; use --force to rebuild")
            return {"tag": tag, "built": False}
        log(f"{tag} was built by another version of its recipe ({built_from or 'unlabelled'}, now "
            f"{recipe.revision}); rebuilding")
    for tool in ("debootstrap", "tar", "docker"):
        if shutil.which(tool) is None:
            raise ImageBuildError(f"{tool} is not installed (apt-get install debootstrap docker.io)")
    source = base_source(read_apt_sources(apt_dir))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="medalboard-rootfs-", dir="/var/tmp") as scratch:
        rootfs = Path(scratch) / "rootfs"
        _debootstrap(source, rootfs, recipe.packages, log)
        if recipe.apt_packages:
            _apt_install(rootfs, recipe.apt_packages, log)
        recipe.finish(rootfs)
        _finish_rootfs(rootfs, recipe)
        labels = _record_contents(rootfs, recipe)
        _docker_import(rootfs, tag, source, recipe, labels, log)
    _self_check(tag, recipe, log)
    seconds = time.monotonic() - started
    size = _image_size(tag)
    log(f"built {tag} from {source.uri} {source.suite} in {seconds:.0f} s; image size {size / 1e6:.0f} MB")
    return {"tag": tag, "built": True, "seconds": round(seconds, 1), "size_bytes": size, "mirror": source.uri,
            "suite": source.suite}


def _debootstrap(source: AptSource, rootfs: Path, packages: tuple[str, ...], log) -> None:
    command = ["debootstrap", "--variant=minbase", f"--include={','.join(packages)}", "--components=main"]
    if source.signed_by and Path(source.signed_by).is_file():
        command.append(f"--keyring={source.signed_by}")
    command += [source.suite, str(rootfs), source.uri]
    log("running: " + " ".join(command))
    _run(command, "debootstrap")


def _apt_install(rootfs: Path, packages: tuple[str, ...], log) -> None:
    """apt-get in the new root filesystem, from the mirror debootstrap wrote into its sources.list;
    services are not started (policy-rc.d) and /proc is mounted only meanwhile."""
    policy = rootfs / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "LANG": "C.UTF-8"}
    _run(["mount", "-t", "proc", "proc", str(rootfs / "proc")], "mount /proc")
    try:
        log(f"apt-get install of {len(packages)} packages: {' '.join(packages)}")
        _run(["chroot", str(rootfs), "apt-get", "update", "-q"], "apt-get update", env=env)
        _run(["chroot", str(rootfs), "apt-get", "install", "-y", "-q", "--no-install-recommends", *packages],
             "apt-get install", env=env)
    finally:
        subprocess.run(["umount", str(rootfs / "proc")], capture_output=True)
        policy.unlink()


def _record_contents(rootfs: Path, recipe: Recipe) -> dict[str, str]:
    """The dpkg list and the pip freeze, written into the image and summed up in its labels."""
    dpkg = _run(["chroot", str(rootfs), "dpkg-query", "-W", "-f", "${Package}=${Version}\n"], "dpkg-query")
    clean = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    freeze = _run(["chroot", str(rootfs), recipe.python, "-m", "pip", "freeze", "--all"], "pip freeze",
                  env=clean) if recipe.python else ""
    folder = rootfs / CONTENTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dpkg.txt").write_text(dpkg)
    (folder / "pip-freeze.txt").write_text(freeze)
    digest = lambda text: hashlib.sha256(text.encode()).hexdigest()  # noqa: E731
    return {FLAVOUR_LABEL: recipe.flavour, FREEZE_LABEL: " ".join(freeze.split()), FREEZE_SHA_LABEL: digest(freeze),
            DPKG_SHA_LABEL: digest(dpkg)}


def _self_check(tag: str, recipe: Recipe, log) -> None:
    command = ["docker", "run", "--rm", "--network", "none", "--read-only", "--tmpfs", "/tmp",
               "--user", f"{AGENT_UID}:{AGENT_UID}", tag, *recipe.self_check]
    try:
        _run(command, "the image's self-check")
        _run(["docker", "run", "--rm", "--network", "none", "--user", "0", tag, "sh", "-c", DPKG_CHECK],
             "the image's dpkg check (dpkg --audit, apt-get check)")
    except ImageBuildError:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)  # never leave a broken image cached
        raise
    log(f"self-check passed: {' '.join(recipe.self_check[:2])} ... works in the image; dpkg is consistent")


def _finish_rootfs(rootfs: Path, recipe: Recipe) -> None:
    """Drop caches and docs; add the unprivileged user the container runs as."""
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info"):
        target = rootfs / junk
        if target.is_dir():
            for child in target.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                elif child.name != "lock":
                    child.unlink()
    with open(rootfs / "etc/passwd", "a") as passwd:
        passwd.write(f"{recipe.user}:x:{AGENT_UID}:{AGENT_UID}:Medalboard agent:/tmp:/bin/sh\n")
    with open(rootfs / "etc/group", "a") as group:
        group.write(f"{recipe.user}:x:{AGENT_UID}:\n")
    for folder in recipe.folders:
        (rootfs / folder).mkdir(parents=True, exist_ok=True)


def _docker_import(rootfs: Path, tag: str, source: AptSource, recipe: Recipe, labels: dict[str, str],
                   log) -> None:
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
           "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1", **recipe.env}
    changes = [
        *(f"ENV {name}={value}" for name, value in env.items()),
        f"LABEL {IMAGE_LABEL}=1 medalboard.apt-source=\"{source.uri} {source.suite}\"",
        *([f"LABEL {REVISION_LABEL}={recipe.revision}"] if recipe.revision else []),
        *(f"LABEL {name}={json.dumps(value)}" for name, value in labels.items() if value),
        *recipe.changes,
    ]
    command = ["docker", "import"] + [arg for change in changes for arg in ("--change", change)] + ["-", tag]
    log(f"importing the root filesystem as {tag}")
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", "-", "."], stdout=subprocess.PIPE)
    try:
        _run(command, "docker import", stdin=tar.stdout)
    finally:
        tar.stdout.close()
        if tar.wait() != 0:
            raise ImageBuildError(f"tar of {rootfs} failed with exit code {tar.returncode}")


def _run(command: list[str], step: str, stdin=None, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(command, stdin=stdin, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout)[-2000:]
        raise ImageBuildError(f"{step} failed with exit code {result.returncode}:\n{tail}")
    return result.stdout


def _image_size(tag: str) -> int:
    import docker

    return int(docker.from_env().images.get(tag).attrs.get("Size", 0))

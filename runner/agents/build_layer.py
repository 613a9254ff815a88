"""The operator's mirrors, given to an agent's build without touching its Dockerfile.

Where a build may reach something (runner.agents.build_network: `registries` or a Docker network),
its `FROM mlebench-env` is built FROM one layer over it instead, made once per set of mirrors:

- MEDALBOARD_AGENTS_GIT_MIRROR: `/etc/gitconfig` rewrites `https://github.com/` to the mirror
  (`url.<mirror>/.insteadOf`), so a Dockerfile's `git clone https://github.com/o/r` and pip's
  `git+https://github.com/o/r@tag` fetch `<mirror>/o/r` unchanged; git is installed from the Debian
  mirror if the base lacks it (the light flavour does; MLE-bench's base has it);
- MEDALBOARD_AGENTS_BUILD_PIP_INDEX: pip's index (`/etc/xdg/pip/pip.conf`);
- the CA bundle the build trusts (MEDALBOARD_AGENTS_BUILD_CA_BUNDLE, else the one this host's pip
  trusts): pip's and git's, for an operator's index or a TLS-intercepting proxy.

These files stay in the agent's image (its sandbox has no network, so they lead nowhere there).
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile

import docker.errors
from django.conf import settings

TAG = "mlebench-env-build"
LABEL = "medalboard.build-layer"
CA_PATH = "/usr/local/share/medalboard/build-ca.pem"
GIT_IF_MISSING = (
    "RUN command -v git >/dev/null || (apt-get update && apt-get install -y --no-install-recommends git "
    "&& rm -rf /var/lib/apt/lists/*)"
)


def files(host_ca: str = "") -> dict[str, bytes]:
    """The layer's files by path in the image; empty when the operator set nothing to give
    (`host_ca`: the bundle this host's pip trusts, used unless the operator named one)."""
    found: dict[str, bytes] = {}
    ca = _read(settings.AGENTS_BUILD_CA_BUNDLE or host_ca)
    if ca:
        found[CA_PATH] = ca
    pip = [f"index-url = {settings.AGENTS_BUILD_PIP_INDEX}"] if settings.AGENTS_BUILD_PIP_INDEX else []
    pip += [f"cert = {CA_PATH}"] if ca else []
    if pip:
        found["/etc/xdg/pip/pip.conf"] = "\n".join(["[global]", *pip, ""]).encode()
    git = []
    if settings.AGENTS_GIT_MIRROR:
        git += [f'[url "{settings.AGENTS_GIT_MIRROR.rstrip("/")}/"]', "\tinsteadOf = https://github.com/"]
    git += ["[http]", f"\tsslCAInfo = {CA_PATH}"] if ca and git else []
    if git:
        found["/etc/gitconfig"] = "\n".join([*git, ""]).encode()
    return found


def ensure(client, base, reach, *, build, base_tag: str, host_ca: str = "") -> str | None:
    """The tag of the layer over `base` (tagged `base_tag`) for this reach (built if missing), or None:
    nothing to add, or a build that reaches nothing (`none`)."""
    given = files(host_ca)
    if reach.mode == "none" or not given:
        return None
    steps = [GIT_IF_MISSING] if settings.AGENTS_GIT_MIRROR else []
    key = hashlib.sha256(repr((base.id, sorted(given.items()), steps)).encode()).hexdigest()
    tag = f"{TAG}:{key[:16]}"
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    dockerfile = [
        f"FROM {base_tag}",
        *(f"COPY f{i} {path}" for i, path in enumerate(given)),
        *steps,
        f"LABEL {LABEL}={key}",
        "",
    ]
    build(
        fileobj=_context("\n".join(dockerfile), list(given.values())),
        custom_context=True,
        tag=tag,
        pull=False,
        network=reach.network,
        buildargs=reach.buildargs,
    )
    return tag


def rebase(text: str, tag: str, base_tag: str) -> str:
    """`text` with its one-line `FROM <base_tag>` instructions building on `tag` instead."""
    pattern = re.compile(rf"^(\s*from\s+){re.escape(base_tag)}(?::latest)?(?=\s|$)", re.IGNORECASE | re.MULTILINE)
    return pattern.sub(lambda m: m.group(1) + tag, text)


def _read(path: str) -> bytes:
    if not path:
        return b""
    with open(path, "rb") as handle:
        return handle.read()


def _context(dockerfile: str, contents: list[bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in [("Dockerfile", dockerfile.encode()), *((f"f{i}", c) for i, c in enumerate(contents))]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer

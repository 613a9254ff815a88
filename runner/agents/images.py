"""Build an MLE-bench agent's image on this Docker host, as MLE-bench builds it, plus one thin layer.

Step one is MLE-bench's own build: the Dockerfile's folder as the context, their four build args,
FROM the local `mlebench-env` (never pulled: no registry is reachable). Step two adds one layer our
sandbox needs: a copy of the image's /home at SEED_HOME (the sandbox mounts a writable /home over it,
and sandbox_init copies the agent's files back in), the image's working directory in
MEDALBOARD_AGENT_WORKDIR (where MLE-bench's `exec_run` would have started start.sh), and no
ENTRYPOINT (the sandbox's command is sandbox_init). Builds run with the network BUILD_NETWORK
(`none` by default: an offline site; a Dockerfile that downloads fails with its own message), and
that is the only way out: the Dockerfile is checked first (runner.agents.dockerfile: no ADD of a URL,
no image pulled, nothing of the host mounted, no ONBUILD, no VOLUME), and the daemon is sent exactly
the bytes that were checked. A stage image that still declares a volume or an ONBUILD trigger is
refused before the layer is built on it.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import tempfile
from pathlib import Path

import docker
import docker.errors

from runner.agents import base_image, build_layer, build_network, wheelhouse
from runner.agents.base_image import SEED_HOME
from runner.agents.dockerfile import DockerfileRefused, check_file, external_images
from runner.agents.mlebench import BUILD_ARGS, Variant

LABEL = "medalboard.mlebench-agent"
# The id of the mlebench-env it was built on: an image whose base was rebuilt since is built again
# (its tag names the agent's folder only). Images built before the label was kept are kept.
BASE_LABEL = "medalboard.base-image"
LOG_LINES = 40


# The likely cause of a failed step, from what its last lines say, first match first: a step without a
# network also fails to find its packages.
CAUSES = (
    ("network", ("temporary failure resolving", "could not resolve", "name or service not known",
                 "network is unreachable", "failed to establish a new connection", "connection refused",
                 "connection timed out", "max retries exceeded", "unable to access 'http", "could not connect",
                 "failed to connect", "no route to host", "temporary failure in name resolution",
                 "certificate verify failed")),
    ("privileged", ("operation not permitted", "permission denied", "cannot mount", "mount:", "privileged",
                    "iptables", "cgroup", "/var/run/docker.sock")),
    ("base", ("cannot find command", "command not found", "no such file or directory: 'git'")),
    ("mirror", ("fatal: repository '",
                "unable to locate package", "unmet dependencies", "has no installation candidate", "404  not found",
                "404 not found", "hash sum mismatch", "is not signed", "no longer has a release file",
                "no matching distribution found", "could not find a version that satisfies")),
)


DOWNLOADERS = re.compile(r"\b(curl|wget|apt-get|apt|pip3?|git|conda|mamba|npm|uv)\s")


class AgentBuildError(Exception):
    """An agent image could not be built; the message says which agent, which step, what it said last
    and the likely cause (`cause`: network, base, privileged, mirror, or "" when nothing says)."""

    def __init__(self, message: str, *, step: str = "", cause: str = "", tail: str = ""):
        super().__init__(message)
        self.step, self.cause, self.tail = step, cause, tail

    def as_record(self) -> dict:
        return {"error": str(self)[:4000], "step": self.step, "cause": self.cause}


def build_reach(reach: build_network.Reach) -> str:
    """What a build may reach, as its log says it."""
    return (f"{reach.describe()} and nothing else reaches out: no ADD of a URL, no image pulled, nothing of the host "
            "mounted")


def build_image(variant: Variant, *, client=None, force: bool = False, nocache: bool = False, log=print) -> dict:
    """The image of `variant` (shared by the variants of one folder and Dockerfile); skipped if its
    tag exists and was built on the mlebench-env there now (`nocache`: not even Docker's layer cache
    is used). Returns the tag, whether it was built and the image id."""
    client = client or docker.from_env()
    tag = variant.image
    text = _checked_text(variant)
    base = _get(client, base_image.TAG)
    existing = None if force else _get(client, tag)
    if existing is not None and (base is None or _labels(existing).get(BASE_LABEL) in (None, base.id)):
        return {"image": tag, "built": False, "id": existing.id}
    if base is None:
        raise AgentBuildError(f"{variant.id}: its Dockerfile starts FROM {base_image.TAG}, which is not built here; "
                              "run `python manage.py build_agent_image --mlebench-env` first")
    if existing is not None:
        log(f"{tag} was built on an older {base_image.TAG}: building it again")
    _check_bases_here(client, variant, text)
    stage = f"{tag}-stage"
    with build_network.opened(client) as reach, tempfile.TemporaryDirectory(prefix="medalboard-build-") as scratch:
        log(f"building {tag} for {variant.id} from {variant.dockerfile}; {build_reach(reach)}")
        build = _builder(client, variant.id, reach)
        layer = build_layer.ensure(client, base, reach, build=build, base_tag=base_image.TAG,
                                   host_ca=base_image.host_ca_bundle(required=False))
        text = _rebased(variant, text, layer)
        dockerfile = Path(scratch) / "Dockerfile.checked"  # outside the context: docker-py sends it as it is
        dockerfile.write_text(text, encoding="utf-8")
        context = _context(variant, Path(scratch), log)
        build(path=str(context), dockerfile=str(dockerfile), tag=stage, network=reach.network,
              buildargs={**BUILD_ARGS, **reach.buildargs}, pull=False, nocache=nocache)
    _check_stage(client, variant, stage)
    workdir = client.images.get(stage).attrs.get("Config", {}).get("WorkingDir") or "/home"
    image = _build(client, variant.id, fileobj=_layer_context(stage, workdir, variant, base.id), custom_context=True,
                   tag=tag, pull=False)
    client.images.remove(stage, noprune=True)
    return {"image": tag, "built": True, "id": image.id}


def _builder(client, agent_id: str, reach: build_network.Reach):
    def build(**kwargs):
        return _build(client, agent_id, refused=reach.refused, **kwargs)

    return build


def _rebased(variant: Variant, text: str, layer: str | None) -> str:
    """`text` (checked) building on the mirrors' layer where it builds on mlebench-env."""
    if not layer or not _on_base(text):
        return text
    rebased = build_layer.rebase(text, layer, base_image.TAG)
    if _on_base(rebased):
        raise AgentBuildError(f"{variant.id}: FROM {base_image.TAG} must be on one line of its own to be given the "
                              "operator's mirrors")
    return rebased


def _on_base(text: str) -> bool:
    return bool({base_image.TAG, f"{base_image.TAG}:latest"} & external_images(text))


def _checked_text(variant: Variant) -> str:
    """The agent's Dockerfile, checked. The build is sent this text (not the folder's file, which could
    change meanwhile), so what the daemon reads is what was checked."""
    source = Path(variant.source_dir) / variant.dockerfile
    try:
        return check_file(source, where=f"{variant.id}: {source}")
    except DockerfileRefused as exc:
        raise AgentBuildError(str(exc)) from None


def _check_bases_here(client, variant: Variant, text: str) -> None:
    """Each base the Dockerfile names must be on this host: the daemon would pull a missing one."""
    missing = sorted(ref for ref in external_images(text) if _get(client, ref) is None)
    if missing:
        raise AgentBuildError(f"{variant.id}: {variant.dockerfile} builds on {', '.join(missing)}, which is not "
                              "built on this Docker host (never pulled: build it here first)")


def _check_stage(client, variant: Variant, stage: str) -> None:
    """What the image itself declares: a volume or an ONBUILD trigger (from a base) is refused too."""
    config = client.images.get(stage).attrs.get("Config") or {}
    found = []
    if config.get("Volumes"):
        found.append(f"volumes {sorted(config['Volumes'])}")
    if config.get("OnBuild"):
        found.append(f"ONBUILD triggers {config['OnBuild']}")
    if found:
        client.images.remove(stage, noprune=True)
        raise AgentBuildError(f"{variant.id}: its image declares {' and '.join(found)}; refused")


def _context(variant: Variant, scratch: Path, log) -> Path:
    """The build context: the agent's folder, or a copy with its wheels.txt's wheels fetched into it."""
    context = Path(variant.source_dir) / variant.context
    if not wheelhouse.needed(context):
        return context
    try:
        return wheelhouse.stage(context, scratch / "context", log=log)
    except wheelhouse.WheelError as exc:
        raise AgentBuildError(f"{variant.id}: {exc}") from None


def _layer_context(stage: str, workdir: str, variant: Variant, base_id: str) -> io.BytesIO:
    labels = {LABEL: variant.version, "medalboard.agent-folder": variant.context, BASE_LABEL: base_id}
    dockerfile = "\n".join([
        f"FROM {stage}",
        f"COPY --from={stage} /home {SEED_HOME}",
        f"ENV MEDALBOARD_AGENT_WORKDIR={json.dumps(workdir)}",
        "ENTRYPOINT []",
        'CMD ["bash"]',
        "LABEL " + " ".join(f"{k}={json.dumps(v)}" for k, v in labels.items()),
        "",
    ]).encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        tar.addfile(info, io.BytesIO(dockerfile))
    buffer.seek(0)
    return buffer


def _build(client, agent_id: str, *, network: str = "none", refused=(), **kwargs):
    """`refused`: the build proxy's list of hosts it refused, read when the build has failed."""
    try:
        image, _ = client.images.build(rm=True, forcerm=True, network_mode=network, **kwargs)
    except docker.errors.BuildError as exc:
        raise failed_step(agent_id, exc.msg, list(exc.build_log or []), refused=list(refused)) from None
    except docker.errors.APIError as exc:
        raise AgentBuildError(f"{agent_id}: docker build failed: {exc.explanation or exc}") from None
    return image


def failed_step(agent_id: str, said: str, build_log: list[dict], *,
                refused: list[str] | None = None) -> AgentBuildError:
    """What a failed build says: its step (`Step 4/9 : RUN ...`), its last lines, the likely cause
    (`refused`: the hosts the build proxy refused it)."""
    lines = [str(entry.get("stream") or entry.get("error") or "").rstrip() for entry in build_log]
    steps = [line.strip() for line in lines if line.strip().startswith("Step ")]
    step = steps[-1] if steps else ""
    tail = _tail(build_log)
    cause, hint = likely_cause(f"{tail}\n{said}", step)
    if refused:
        cause, hint = "network", (f"network: the build reached for {', '.join(refused)}, which is not among the "
                                  "registries it may reach (MEDALBOARD_AGENTS_BUILD_REGISTRIES)")
    where = f" at {step[:300]}" if step else ""
    message = f"{agent_id}: docker build failed{where}: {said}\nlikely cause: {hint}\nlast lines:\n{tail}"
    return AgentBuildError(message, step=step, cause=cause, tail=tail)


def likely_cause(text: str, step: str = "") -> tuple[str, str]:
    """(cause, a sentence for the operator) from a failed step's output; where the output says
    nothing (the daemon may drop a short step's last output), a step that runs a downloader without
    a build network."""
    lowered = text.lower()
    cause = next((name for name, signs in CAUSES if any(sign in lowered for sign in signs)), "")
    network = build_network.mode()
    if not cause and network == "none" and DOWNLOADERS.search(step.partition(" : ")[2]):
        cause = "network"
    if cause == "network":
        hint = (f"network: the step reached for a host it could not reach; builds use the network {network!r} "
                "(MEDALBOARD_AGENTS_BUILD_NETWORK)")
        if "certificate verify failed" in lowered:
            hint += "; TLS: the host answered with a certificate the image does not trust (a TLS-intercepting proxy?)"
        if "github.com" in lowered:
            hint += "; a git host: give the build a git mirror, or vendor the repository into the agent's folder"
        return cause, hint
    if cause == "mirror" and "fatal: repository '" in lowered:
        return cause, ("mirror: the git host answered that it has no such repository; the host of "
                       "MEDALBOARD_AGENTS_GIT_MIRROR must hold it at GitHub's path (owner/name)")
    if cause == "mirror":
        return cause, ("mirror: the package index answered but lacks what the step asks for, or the base's apt "
                       f"state is broken (rebuild {base_image.TAG}: build_agent_image --mlebench-env --force); "
                       f"the build network is {network!r}")
    if cause == "base":
        return cause, (f"base: the step runs a tool {base_image.TAG} lacks (the light flavour has no git, compilers "
                       "or ffmpeg): build the full one, build_agent_image --mlebench-env --flavour full")
    if cause == "privileged":
        return cause, ("privileged: the step needs privileges an image build never gets (no --privileged, no "
                       "mounts, no Docker socket): do it at run time, or leave the step out")
    return "", "the step itself failed (see its last lines)"


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _tail(build_log) -> str:
    lines = [ANSI.sub("", str(entry.get("stream") or entry.get("error") or "")).rstrip() for entry in build_log or []]
    return "\n".join([line for line in lines if line][-LOG_LINES:])


def _labels(image) -> dict:
    return (image.attrs.get("Config") or {}).get("Labels") or {}


def _get(client, tag: str):
    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None

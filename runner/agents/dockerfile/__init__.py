"""What an agent's Dockerfile may ask of the building host: refused before anything is built.

The build's RUN steps get the build network (MEDALBOARD_AGENTS_BUILD_NETWORK, `none` by default), but
the Docker daemon itself does more on a build's behalf, with the host's network and disks: it fetches
`ADD <url>` sources, pulls any image a FROM, `COPY --from` or `RUN --mount from=` names that it does
not have, and BuildKit hands RUN steps the host's SSH agent, secrets and shared caches. An image's
ONBUILD triggers run in the next build of it (ours), and a VOLUME becomes a folder on the host's disk
for every container of it. So a Dockerfile is refused, naming its line, if it has:

- ADD with a URL or git source, or a source holding a variable (which could expand to one);
- FROM, `COPY --from` or `RUN --mount from=` of anything but an earlier stage of the same file,
  `scratch` or an allowed base (mlebench-env, the site's agent image), or naming one by a variable;
- RUN flags other than `--mount` of type bind (the build context or an earlier stage) or tmpfs, and
  `--network=none`; flags of FROM; ADD/COPY flags other than those that only shape the copy;
- ONBUILD, VOLUME, a `medalboard.*` label (the site's), or a `# syntax=` directive (a frontend image).

The file is read as both builders read it (reading.py): the daemon's classic builder knows no
heredocs (their lines are instructions to it), BuildKit does; a problem in either reading refuses.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from runner.agents.dockerfile.reading import Instruction, quote, readings, words

MAX_BYTES = 1 << 20
URL = re.compile(r"[a-z][a-z0-9+.-]*://|^[^/\s]+@[^/\s]+:", re.IGNORECASE)
COPY_FLAGS = {"chown", "chmod", "link", "parents", "exclude"}  # flags that only shape what is copied
RUN_NETWORKS = {"none"}
SAFE_MOUNTS = {"bind", "tmpfs"}


class DockerfileRefused(Exception):
    """The Dockerfile asks the building host for something it never gives; the message names the lines."""


def check_file(path: Path | str, *, where: str = "", allowed_bases: set[str] | None = None) -> str:
    """The Dockerfile's text, if nothing in it is refused; DockerfileRefused names every refused line."""
    path = Path(path)
    data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise DockerfileRefused(f"{where or path}: larger than {MAX_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DockerfileRefused(f"{where or path}: not UTF-8 text") from None
    problems = check(text, allowed_bases=allowed_bases)
    if problems:
        raise DockerfileRefused(f"{where or path}: refused, the build would reach outside its sandbox:\n"
                                + "\n".join(problems))
    return text


def check(text: str, *, allowed_bases: set[str] | None = None) -> list[str]:
    """Every refused line of `text`, as `line N: <line>: why`, in order (empty: the file may be built)."""
    allowed = default_bases() if allowed_bases is None else allowed_bases
    problems, both = readings(text)
    found: dict[tuple[int, str], None] = dict.fromkeys(problems)
    for instructions in both:
        found.update(dict.fromkeys(_check_instructions(instructions, allowed)))
    return [f"line {line}: {why}" for line, why in sorted(found)]


def external_images(text: str) -> set[str]:
    """The allowed bases `text` (already checked) builds on: each must exist locally, or it would be pulled."""
    images: set[str] = set()
    for instructions in readings(text)[1]:
        stages: list[str] = []
        for ins in instructions:
            for ref in _image_refs(ins, stages):
                if not _is_stage(ref, stages) and ref != "scratch":
                    images.add(ref)
            if ins.keyword == "from":
                stages.append(_stage_name(ins))
    return images


def default_bases() -> set[str]:
    from django.conf import settings

    from runner.agents.base_image import TAG

    return {TAG, settings.MEDALBOARD_AGENT_IMAGE}


def _check_instructions(instructions: list[Instruction], allowed: set[str]) -> list[tuple[int, str]]:
    problems: list[tuple[int, str]] = []
    stages: list[str] = []
    for ins in instructions:
        for why in _problems(ins, stages, allowed):
            problems.append((ins.line, f"{quote(ins.text)}: {why}"))
        if ins.keyword == "from":
            stages.append(_stage_name(ins))
    return problems


def _problems(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    keyword = ins.keyword
    if keyword.startswith("!"):
        return [f"{keyword[1:].upper()} spelled with letters other than ASCII: refused"]
    if keyword == "<heredoc>":
        return [f"a heredoc named {ins.args!r}: name a heredoc with a plain word"]
    if keyword == "onbuild":
        return ["ONBUILD runs its instruction in a later build of this image (the site's): refused"]
    if keyword == "volume":
        return ["VOLUME makes a folder on the host's disk for every container of the image: refused "
                "(write under /home, which is the sandbox's)"]
    checks = {"from": _check_from, "copy": _check_copy, "add": _check_add, "run": _check_run,
              "label": _check_label}
    return checks[keyword](ins, stages, allowed) if keyword in checks else []


def _check_from(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    flags, rest = _flags(ins.args)
    problems = [f"FROM --{name} is refused (an image is only ever taken as it is here)" for name, _ in flags]
    if not rest:
        return [*problems, "FROM names no image"]
    return [*problems, *_check_image(rest[0], stages, allowed, "FROM")]


def _check_copy(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    problems = []
    for name, value in _flags(ins.args)[0]:
        if name == "from":
            problems += _check_image(value or "", stages, allowed, "COPY --from")
        elif name not in COPY_FLAGS:
            problems.append(f"COPY --{name} is refused")
    return problems


def _check_add(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    flags, rest = _flags(ins.args)
    problems = [f"ADD --{name} is refused" for name, _ in flags if name not in COPY_FLAGS]
    sources = _json_list(ins.args)
    if sources is None:
        sources = rest
    for source in sources[:-1]:
        plain = re.sub(r"[\"'\\`]", "", source)
        if URL.search(plain) or plain.lower().startswith("git@"):
            problems.append(f"ADD of {source!r}: the daemon would fetch it from the network; put the file in "
                            "the agent's folder and COPY it")
        elif "$" in plain:
            problems.append(f"ADD of {source!r}: a variable in an ADD source could be a URL; use COPY")
    return problems


def _check_run(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    problems = []
    for name, value in _flags(ins.args)[0]:
        if name == "mount":
            problems += _check_mount(value or "", stages, allowed)
        elif name == "network" and (value or "").lower() in RUN_NETWORKS:
            continue
        else:
            problems.append(f"RUN --{name}{'=' + value if value else ''} is refused (the build network is "
                            "the site's setting)")
    return problems


def _check_mount(value: str, stages: list[str], allowed: set[str]) -> list[str]:
    try:
        fields = next(csv.reader([value]))
    except (csv.Error, StopIteration):
        return [f"RUN --mount={value}: cannot be read"]
    options = {}
    for item in fields:
        key, _, val = item.partition("=")
        options[key.strip().lower()] = val.strip()
    kind = options.get("type", "bind").lower()
    if kind not in SAFE_MOUNTS:
        return [f"RUN --mount=type={kind} reaches the building host (its SSH agent, secrets or shared "
                "caches): refused"]
    if "from" in options:
        return _check_image(options["from"], stages, allowed, "RUN --mount from")
    return []


def _check_label(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    for word in words(ins.args):
        key = re.sub(r"[\"'\\`]", "", word.partition("=")[0]).lower()
        if key.startswith("medalboard.") or "$" in key:
            return [f"the label {key!r}: labels named medalboard.* (or by a variable) are the site's"]
    return []


def _check_image(ref: str, stages: list[str], allowed: set[str], what: str) -> list[str]:
    ref = _unquote(ref)
    if "$" in ref:
        return [f"{what} {ref}: an image named by a variable cannot be checked"]
    if _is_stage(ref, stages) or ref == "scratch" or _with_latest(ref) in {_with_latest(a) for a in allowed}:
        return []
    return [f"{what} {ref}: not an earlier stage of this Dockerfile nor an allowed base "
            f"({', '.join(sorted(allowed))}); the build never pulls an image"]


def _image_refs(ins: Instruction, stages: list[str]) -> list[str]:
    flags, rest = _flags(ins.args)
    if ins.keyword == "from":
        return [_unquote(rest[0])] if rest else []
    refs = [_unquote(v or "") for name, v in flags if ins.keyword == "copy" and name == "from"]
    for name, value in flags if ins.keyword == "run" else []:
        if name == "mount":
            options = dict(item.partition("=")[::2] for item in (value or "").split(","))
            refs += [_unquote(options["from"])] if "from" in options else []
    return refs


def _stage_name(ins: Instruction) -> str:
    rest = _flags(ins.args)[1]
    return rest[2].lower() if len(rest) >= 3 and rest[1].lower() == "as" else ""


def _is_stage(ref: str, stages: list[str]) -> bool:
    if ref.isdigit():
        return int(ref) < len(stages)
    return bool(ref) and ref.lower() in stages


def _with_latest(ref: str) -> str:
    return ref if ":" in ref.rsplit("/", 1)[-1] else f"{ref}:latest"


def _flags(args: str) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Leading `--name[=value]` words (names in lower case) and the words after them."""
    rest = words(args)
    flags = []
    while rest and rest[0].startswith("--"):
        name, sep, value = rest.pop(0)[2:].partition("=")
        flags.append((name.lower(), _unquote(value) if sep else None))
    return flags, rest


def _json_list(args: str) -> list[str] | None:
    words = _flags(args)[1]
    text = " ".join(words)
    if not text.startswith("["):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word

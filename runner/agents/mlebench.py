"""MLE-bench's agent packaging: a folder `agents/` with `<name>/config.yaml`, a Dockerfile and start.sh.

Each top-level key of a config.yaml whose value is a mapping with `start` and `dockerfile` is an agent
id, kept as it is (`aide`, `aide/dev`); other keys (`vars`, `kwargs_common`) only hold YAML anchors,
and so does a top-level mapping that other top-level entries merge in (`defaults: &defaults`, then
`<<: *defaults`): a template, not an agent.
An agent has `start` and `dockerfile` (paths relative to the agents folder), `kwargs` with a
`kwargs_type` (`argparse`: `--key value`; `omegaconf`: `key=value`), `env_vars` whose values may be
`${{ secrets.NAME }}` (resolved from the job's secrets when it runs) and `privileged`.

The folder is untrusted: every path stays inside it (no `..`, no absolute path, no link anywhere on
the way), links inside the agent's folder must point inside it, nothing but files, folders and such
links, and the folder is bounded in size and file count. A problem raises AgentFormatError naming the
file. The version of an agent is a content hash of its folder (and of its build context, when the
Dockerfile lives elsewhere): any change makes a new version, and a new image tag.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

FORMAT = "mlebench"
KWARGS_TYPES = ("argparse", "omegaconf")
SECRET = re.compile(r"\$\{\{\s*secrets\.(\w+)\s*\}\}")
AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*")
# Where MLE-bench's images keep things; the Dockerfiles receive them as build args.
BUILD_ARGS = {"SUBMISSION_DIR": "/home/submission", "LOGS_DIR": "/home/logs", "CODE_DIR": "/home/code",
              "AGENT_DIR": "/home/agent"}
START_SCRIPT = "/home/agent/start.sh"
CONFIG_NAME = "config.yaml"
MAX_CONFIG_BYTES = 1 << 20
MAX_MERGED_PAIRS = 100_000
SCALARS = (str, int, float, bool, type(None))


class AgentFormatError(Exception):
    """The agents folder cannot be imported; the message names the file and the problem."""


class VariantRefused(AgentFormatError):
    """One agent of the folder cannot be imported (its Dockerfile is refused); the others can."""


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 256 << 20
    max_files: int = 20_000
    allow_privileged: bool = False


@dataclass(frozen=True)
class Variant:
    """One agent id of a config.yaml, as a job runs it. Paths are relative to the agents folder."""

    id: str
    source_dir: str  # the agents folder it was read from (absolute), to build it again on a runner
    config_file: str
    start: str
    dockerfile: str
    kwargs: dict[str, str] = field(default_factory=dict)
    kwargs_type: str | None = None
    env_vars: dict[str, str] = field(default_factory=dict)
    privileged: bool = False
    version: str = ""

    @property
    def context(self) -> str:
        """The Docker build context: the Dockerfile's folder, as MLE-bench builds `agents/<name>/`."""
        return str(Path(self.dockerfile).parent)

    @property
    def image(self) -> str:
        return image_tag(Path(self.context).name, self.version)

    def secret_names(self) -> list[str]:
        values = [*self.kwargs.values(), *self.env_vars.values()]
        return sorted({m.group(1) for v in values if (m := SECRET.fullmatch(v.strip()))})

    def environment(self, secrets: dict[str, str]) -> dict[str, str]:
        return {name: resolve(value, secrets) for name, value in self.env_vars.items()}

    def argv(self, secrets: dict[str, str]) -> list[str]:
        """The kwargs as start.sh's arguments, as MLE-bench passes them."""
        pairs = [(key, resolve(value, secrets)) for key, value in self.kwargs.items()]
        if self.kwargs_type == "argparse":
            return [part for key, value in pairs for part in (f"--{key}", value)]
        if self.kwargs_type == "omegaconf":
            return [f"{key}={value}" for key, value in pairs]
        return []

    def command(self) -> list[str]:
        """What the definition shows as its command (secrets as their references)."""
        return ["bash", START_SCRIPT, *self.argv({name: f"${{{{ secrets.{name} }}}}" for name in self.secret_names()})]

    def as_config(self) -> dict:
        """As stored in a JSON field. Pairs, not objects: PostgreSQL's jsonb does not keep key order,
        and the order of kwargs is the order of start.sh's arguments."""
        config = {"format": FORMAT, **asdict(self)}
        config.update(kwargs=list(map(list, self.kwargs.items())), env_vars=list(map(list, self.env_vars.items())))
        return config

    @classmethod
    def from_config(cls, config: dict) -> Variant:
        fields = {k: v for k, v in config.items() if k in cls.__dataclass_fields__}
        for name in ("kwargs", "env_vars"):
            fields[name] = dict(fields.get(name) or {})
        return cls(**fields)


def resolve(value: str, secrets: dict[str, str]) -> str:
    """`${{ secrets.NAME }}` is the job's secret NAME; anything else is the value itself."""
    match = SECRET.fullmatch(value.strip())
    if match is None:
        return value
    if match.group(1) not in secrets:
        raise KeyError(f"the job has no secret {match.group(1)}")
    return secrets[match.group(1)]


def image_tag(name: str, version: str) -> str:
    """A Docker reference from the context folder's name and the version (names Docker accepts)."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent"
    return f"mlebench-agent-{slug[:60]}:{version[:16]}"


# --- reading a folder --------------------------------------------------------------------------


def read_agents(path: Path | str, limits: Limits = Limits(), refused: dict[str, str] | None = None) -> list[Variant]:
    """Every agent of every `*/config.yaml` under `path`; raises AgentFormatError on any problem.

    A `privileged` agent the site does not allow, or one whose Dockerfile is refused, raises too,
    unless `refused` is given: then it is left out, with the reason under its id, and the folder's
    other agents are read (MLE-bench's own agents/ holds one, opendevin, beside agents that need
    nothing of the kind)."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise AgentFormatError(f"{path}: not a folder")
    configs = sorted(p for p in root.glob(f"*/{CONFIG_NAME}") if not p.parent.is_symlink())
    if not configs:
        raise AgentFormatError(f"{path}: no */{CONFIG_NAME} (MLE-bench's layout: agents/<name>/{CONFIG_NAME})")
    hashes: dict[Path, str] = {}
    variants: dict[str, Variant] = {}
    for config in configs:
        for variant in _read_config(root, config, limits, hashes, refused):
            if variant.id in variants:
                raise AgentFormatError(f"{config}: agent id {variant.id!r} is also defined in "
                                       f"{root / variants[variant.id].config_file}")
            variants[variant.id] = variant
    for variant in [v for v in variants.values() if v.privileged and not limits.allow_privileged]:
        reason = (f"{root / variant.config_file}: agent {variant.id!r}: privileged containers are refused on this "
                  "site (MEDALBOARD_AGENTS_ALLOW_PRIVILEGED is off)")
        if refused is None:
            raise AgentFormatError(reason)
        refused[variant.id] = reason
        del variants[variant.id]
    if not variants and refused:
        raise AgentFormatError(f"{path}: every agent was refused: {'; '.join(refused.values())}")
    if not variants:
        raise AgentFormatError(f"{path}: no agent found (a top-level key with `start` and `dockerfile`)")
    return list(variants.values())


def _read_config(root: Path, config: Path, limits: Limits, hashes: dict[Path, str],
                 refused: dict[str, str] | None) -> list[Variant]:
    relative = str(config.relative_to(root))
    contents, templates = _load_yaml(config)
    if not isinstance(contents, dict):
        raise AgentFormatError(f"{config}: the top level must be a mapping of agent ids")
    variants = []
    for key, body in contents.items():
        if key in templates or not isinstance(body, dict) or not ({"start", "dockerfile"} & set(body)):
            continue  # e.g. `vars:` or `defaults:`, which only hold what the agents merge in
        try:
            variants.append(_variant(root, config, relative, key, body, limits, hashes))
        except VariantRefused as exc:
            if refused is None:
                raise
            refused[str(key)] = str(exc)
    return variants


def _load_yaml(config: Path):
    _check_path_parts(config.parent.parent, config, config)
    if not stat.S_ISREG(config.lstat().st_mode):
        raise AgentFormatError(f"{config}: not a regular file")
    if config.stat().st_size > MAX_CONFIG_BYTES:
        raise AgentFormatError(f"{config}: larger than {MAX_CONFIG_BYTES} bytes")
    try:
        loader = yaml.SafeLoader(config.read_text(encoding="utf-8"))
        try:
            node = loader.get_single_node()
            _check_merges(node, config)
            templates = _templates(node)  # before constructing, which merges the nodes in place
            return loader.construct_document(node) if node is not None else None, templates
        finally:
            loader.dispose()
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise AgentFormatError(f"{config}: not valid YAML: {exc}") from None
    except RecursionError:
        raise AgentFormatError(f"{config}: nested too deeply") from None


def _check_merges(root, config: Path) -> None:
    """Merge keys copy the merged pairs: `<<: [*a, *a]` repeated doubles them at every level (a
    "billion laughs" of merges). Count what flattening would make, without making it."""
    sizes: dict[int, int] = {}

    def size(node) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        sizes[id(node)] = 0  # a cycle counts as nothing more
        total = 0
        for key, value in node.value:
            merged = value.value if isinstance(value, yaml.SequenceNode) else [value]
            if key.tag == "tag:yaml.org,2002:merge":
                total += sum(size(n) for n in merged if isinstance(n, yaml.MappingNode))
            else:
                total += 1
            if total > MAX_MERGED_PAIRS:
                raise AgentFormatError(f"{config}: its merge keys expand to more than {MAX_MERGED_PAIRS} entries")
        sizes[id(node)] = total
        return total

    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            size(node)
            stack += [v for _, v in node.value]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value


def _templates(root) -> set:
    """Top-level keys whose mapping another top-level entry merges in with `<<`."""
    if not isinstance(root, yaml.MappingNode):
        return set()
    merged = set()
    for _, body in root.value:
        for key, value in body.value if isinstance(body, yaml.MappingNode) else ():
            if key.tag == "tag:yaml.org,2002:merge":
                merged |= {id(n) for n in (value.value if isinstance(value, yaml.SequenceNode) else [value])}
    return {key.value for key, body in root.value if id(body) in merged and isinstance(key, yaml.ScalarNode)}


def _variant(root: Path, config: Path, relative: str, key, body: dict, limits: Limits,
             hashes: dict[Path, str]) -> Variant:
    where = f"{config}: agent {key!r}"
    if not isinstance(key, str) or not AGENT_ID.fullmatch(key) or len(key) > 200:
        raise AgentFormatError(f"{where}: an agent id is letters, digits, '.', '_', '-' and '/' between names")
    for needed in ("start", "dockerfile"):
        if needed not in body:
            raise AgentFormatError(f"{where}: missing `{needed}`")
    start = _inside(root, body["start"], f"{where}: start")
    dockerfile = _inside(root, body["dockerfile"], f"{where}: dockerfile")
    _check_dockerfile(root / dockerfile, where)
    kwargs_type = body.get("kwargs_type")
    kwargs = _text_values(body.get("kwargs") or {}, f"{where}: kwargs")
    if kwargs_type is not None and kwargs_type not in KWARGS_TYPES:
        raise AgentFormatError(f"{where}: unknown kwargs_type {kwargs_type!r} (argparse or omegaconf)")
    if kwargs and kwargs_type is None:
        raise AgentFormatError(f"{where}: kwargs are given without a kwargs_type (argparse or omegaconf)")
    privileged = body.get("privileged", False)
    if not isinstance(privileged, bool):
        raise AgentFormatError(f"{where}: privileged must be true or false, not {privileged!r}")
    folders = {config.parent, (root / dockerfile).parent, (root / start).parent}
    version = _version([_folder_hash(root, f, limits, hashes) for f in sorted(folders)], dockerfile)
    return Variant(
        id=key, source_dir=str(root), config_file=relative, start=start, dockerfile=dockerfile, kwargs=kwargs,
        kwargs_type=kwargs_type, env_vars=_env_vars(body.get("env_vars") or {}, where), privileged=privileged,
        version=version,
    )


def _check_dockerfile(path: Path, where: str) -> None:
    """Refused at reading, before anything is stored or built (runner.agents.dockerfile)."""
    from runner.agents.dockerfile import DockerfileRefused, check_file

    try:
        check_file(path, where=f"{where}: {path}")
    except DockerfileRefused as exc:
        raise VariantRefused(str(exc)) from None


def _text_values(mapping, where: str) -> dict[str, str]:
    if not isinstance(mapping, dict):
        raise AgentFormatError(f"{where} must be a mapping")
    bad = [str(k) for k, v in mapping.items() if not isinstance(k, str | int | float) or not isinstance(v, SCALARS)]
    if bad:
        raise AgentFormatError(f"{where}: values must be plain text, numbers or booleans: {', '.join(bad[:5])}")
    return {str(k): str(v) for k, v in mapping.items()}


def _env_vars(mapping, where: str) -> dict[str, str]:
    values = _text_values(mapping, f"{where}: env_vars")
    bad = [k for k in values if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k)]
    if bad:
        raise AgentFormatError(f"{where}: env_vars names must be letters, digits and _: {', '.join(bad[:5])}")
    return values


def _inside(root: Path, value, where: str) -> str:
    """A relative path to a regular file inside `root`, with no `..` and no link on the way."""
    if not isinstance(value, str) or not value.strip():
        raise AgentFormatError(f"{where} must be a path relative to the agents folder")
    path = Path(value)
    if path.is_absolute() or ".." in path.parts:
        raise AgentFormatError(f"{where} {value!r} must stay inside the agents folder (no absolute path, no ..)")
    target = root / path
    _check_path_parts(root, target, where)
    if not target.exists():
        raise AgentFormatError(f"{where} {value!r}: {target} does not exist")
    if not target.is_file():
        raise AgentFormatError(f"{where} {value!r}: {target} is not a regular file")
    return str(path)


def _check_path_parts(root: Path, target: Path, where) -> None:
    current = root
    for part in target.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            raise AgentFormatError(f"{where}: {current} is a link; the path must not go through links")


# --- the folder's content ----------------------------------------------------------------------


def _folder_hash(root: Path, folder: Path, limits: Limits, cache: dict[Path, str]) -> str:
    if folder not in cache:
        cache[folder] = _hash_tree(root, folder, limits)
    return cache[folder]


def _hash_tree(root: Path, folder: Path, limits: Limits) -> str:
    digest = hashlib.sha256()
    total, count = 0, 0
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        for name in [*sorted(filenames), *[d for d in dirnames if Path(dirpath, d).is_symlink()]]:
            path = Path(dirpath) / name
            count += 1
            if count > limits.max_files:
                raise AgentFormatError(f"{folder}: more than {limits.max_files} files")
            total += _hash_entry(digest, folder, path)
            if total > limits.max_bytes:
                raise AgentFormatError(f"{folder}: larger than {limits.max_bytes} bytes")
    return digest.hexdigest()


def _hash_entry(digest, folder: Path, path: Path) -> int:
    info = path.lstat()
    name = str(path.relative_to(folder)).encode()
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(path)
        resolved = os.path.realpath(path)
        if not (resolved == str(folder) or resolved.startswith(str(folder) + os.sep)):
            raise AgentFormatError(f"{path}: a link to {target!r}, outside the agent's folder {folder}")
        digest.update(b"L\0" + name + b"\0" + target.encode() + b"\0")
        return 0
    if not stat.S_ISREG(info.st_mode):
        raise AgentFormatError(f"{path}: not a regular file, folder or link (a FIFO, socket or device)")
    digest.update(b"F\0" + name + b"\0" + (b"x" if info.st_mode & 0o111 else b"-") + b"\0")
    with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    digest.update(b"\0")
    return info.st_size


def _version(folder_hashes: list[str], dockerfile: str) -> str:
    return hashlib.sha256("\0".join([*folder_hashes, dockerfile]).encode()).hexdigest()

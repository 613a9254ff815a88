"""The Docker backend: one container per run, through the Docker SDK, with nothing the agent need not see.

A container gets exactly five bind mounts: the competition's public data at /home/data and the
agent tools at /opt/medalboard (read-only), and the run's submission, logs and code folders
(writable); an MLE-bench agent also gets a writable /home from the task's scratch (spec.home_dir,
runner.agents.job_package), the others mounted beneath it; a research task's run also gets its
workspace at /home/workspace (writable, its current folder) with the task's read-only files mounted
read-only over it (runner.research.site). Never the private answers or a research task's scripts,
never the project. Besides:

- network `none`, unless the spec names an egress network its runner lists for sandboxes
  (runner.host.networks, checked again at start: never host, bridge or another container's; and the
  daemon's network of that name must have that very name, so neither an id nor an id's prefix
  can stand for the host's or the default bridge);
- device requests for exactly the assigned GPU indices (the container sees them as 0..n-1), and the
  variables the NVIDIA runtime and CUDA read set to the same GPUs (runner.backends.gpus), `void` for none;
- CPU (nano_cpus), memory with no extra swap, shm and pids limits; a read-only root filesystem with a
  tmpfs /tmp (HOME and TMPDIR); all capabilities dropped; no-new-privileges; an init process
  (docker-init) as PID 1 that forwards SIGTERM and reaps zombies;
- a non-root user: the runner's own uid:gid, or AGENT_UID (1000) when the runner is root, in which
  case the writable folders are handed to that uid first.
- nothing of the image's own configuration, which is the agent's: the command is the entrypoint
  (the image's ENTRYPOINT and CMD are not run), the user, stop signal (SIGTERM) and labels are the
  site's, the health check is off, and each VOLUME the image declares is a bounded tmpfs (Docker
  would make it a folder on the host's disk); containers are removed with their volumes.

stop() is `docker stop` (SIGTERM, SIGKILL after the grace); the files stay, since they are bind
mounts. remove() first copies the container's output into the runner's own folder beside the
workdir (spec.host_output_log, where the local backend writes it too; never into a folder the agent
can write, where a planted link would redirect the write), then removes the container. Docker keeps
that output in a json-file log capped at LOG_MAX_BYTES, so a flood cannot fill the runner's disk.
Containers carry the labels `medalboard.sandbox=1`, `medalboard.runner=<runner name>` and
`medalboard.site=<site key>` (a digest of the site's database: staging and production, or two test
sessions, may share a Docker host and both name their runner after it): remove_stale() and the
name-clash path remove only this runner's own sandboxes, never another runner's or another site's.

The OCI runtime is the runner's choice (`runtime`, MEDALBOARD_DOCKER_RUNTIME): Docker's default
`runc`, or `runsc` (gVisor: the agent's system calls go to a user-space kernel, not the host's),
registered in /etc/docker/daemon.json; check() refuses a runtime the daemon does not know.

No registry is reachable from a runner: images are only looked up locally and never pulled.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import posixpath
import time
from collections.abc import Iterable

import docker
import docker.errors
import requests.exceptions
from docker.types import LogConfig, Mount

from runner.backends.base import (
    KILLED_OUTSIDE,
    OUT_OF_MEMORY,
    Backend,
    BackendUnavailable,
    ImageNotFound,
    Sandbox,
    SandboxPaths,
    SandboxSpec,
    StartFailed,
    file_tail,
    sandbox_env,
)
from runner.backends.gpus import docker_environment, docker_request
from runner.gateway import SANDBOX_SOCKET
from runner.host.networks import NetworkRefused, check_sandbox_network

DEFAULT_RUNTIME = "runc"
LABEL = "medalboard.sandbox"
RUNNER_LABEL = "medalboard.runner"
SITE_LABEL = "medalboard.site"
# runner.host.agent_image's record of what an image holds, as a run's recipe keeps it (the freeze itself,
# medalboard.env.pip-freeze, is in the image and its label, not in every recipe).
IMAGE_ENV_LABELS = {"medalboard.env.flavour": "flavour", "medalboard.env.pip-freeze-sha256": "pip_freeze_sha256",
                    "medalboard.env.dpkg-sha256": "dpkg_sha256"}
LOG_MAX_BYTES = 8 << 20  # the agent's output Docker keeps, in two rotated files of half this size
DEFAULT_BRIDGE = "com.docker.network.bridge.default_bridge"  # the option that marks Docker's own bridge
AGENT_UID = 1000  # the `agent` user of the image runner/host/agent_image.py builds
BUILD_HINT = "build it with `python manage.py build_agent_image --tag {image}`"
PATHS = SandboxPaths(data="/home/data", submission="/home/submission", logs="/home/logs", code="/home/code",
                     tools="/opt/medalboard")
WORKSPACE = "/home/workspace"  # a research task's workspace
MAX_READ_ONLY_MOUNTS = 256  # read-only files mounted one by one; past this many they are only checked
IMAGE_VOLUME_BYTES = 64 << 20  # each volume an image declares is a tmpfs of this size (in the memory limit)
MAX_IMAGE_VOLUMES = 16
# Failures that mean "the daemon cannot be talked to", as opposed to an answer from it.
CONNECTION_ERRORS = (requests.exceptions.ConnectionError, requests.exceptions.Timeout, ConnectionError)


class DockerBackend(Backend):
    name = "docker"

    def __init__(self, client=None, *, runner_name: str = "", runtime: str = DEFAULT_RUNTIME, site: str = "") -> None:
        self._client = client
        self.runner_name = runner_name or os.environ.get("MEDALBOARD_RUNNER_NAME") or os.uname().nodename
        self.runtime = runtime or DEFAULT_RUNTIME
        self.site = site or site_key()

    @property
    def labels(self) -> dict[str, str]:
        """What marks a container as one of this runner's sandboxes."""
        return {LABEL: "1", RUNNER_LABEL: self.runner_name, SITE_LABEL: self.site}

    @property
    def client(self):
        if self._client is None:
            with _daemon_errors():
                self._client = docker.from_env()
        return self._client

    def check(self) -> None:
        with _daemon_errors():
            self.client.ping()
            if self.runtime != DEFAULT_RUNTIME:
                known = self.client.info().get("Runtimes") or {}
                if self.runtime not in known:
                    raise StartFailed(f"the Docker daemon has no runtime {self.runtime!r} (it has "
                                      f"{', '.join(sorted(known)) or 'none'}); register it in /etc/docker/daemon.json")

    def image_exists(self, image: str) -> bool:
        with _daemon_errors():
            try:
                self.client.images.get(image)
            except docker.errors.ImageNotFound:
                return False
        return True

    def paths(self, spec: SandboxSpec) -> SandboxPaths:
        return _paths(spec)

    def start(self, spec: SandboxSpec) -> DockerSandbox:
        try:  # checked again here: a job's network was checked against every runner, not this one
            check_sandbox_network(spec.network)
            self._check_daemon_network(spec.network)
        except NetworkRefused as exc:
            raise StartFailed(f"sandbox {spec.name}: {exc}") from None
        if not self.image_exists(spec.image):  # create() would try to pull it from a registry
            raise ImageNotFound(self._missing_image(spec.image))
        self._prepare_folders(spec)
        with _daemon_errors():
            container = self._create(spec)
            try:
                container.start()
            except docker.errors.APIError as exc:
                container.remove(force=True)
                raise StartFailed(f"sandbox {spec.name} could not start {spec.command[:1]!r}: {_explain(exc)}") from exc
        return DockerSandbox(spec, container)

    def container_kwargs(self, spec: SandboxSpec, image_volumes: Iterable[str] = ()) -> dict:
        """Everything given to containers.create for `spec` (also what the tests pin); `image_volumes`
        are the paths the image declares as volumes (_declared_volumes)."""
        # The image's own configuration is the agent's, so untrusted: the site sets the command (the
        # entrypoint, with no CMD of the image's appended), user, stop signal, health check and labels,
        # and every volume the image declares is a bounded tmpfs instead of a folder on the host's disk.
        mounts = _mounts(spec)
        kwargs = dict(
            image=spec.image, entrypoint=list(spec.command), command=[], name=spec.name, detach=True,
            labels=self.labels,
            log_config=LogConfig(type="json-file", config={"max-size": str(LOG_MAX_BYTES // 2), "max-file": "2"}),
            environment={**sandbox_env(spec, _paths(spec)), "HOME": "/tmp", "TMPDIR": "/tmp",
                         **docker_environment(spec.gpus)},
            working_dir=_paths(spec).cwd, user=_sandbox_user(), mounts=mounts,
            stop_signal="SIGTERM", healthcheck={"test": ["NONE"]},
            nano_cpus=int(spec.cpus * 1e9), mem_limit=spec.memory_bytes, memswap_limit=spec.memory_bytes,
            shm_size=spec.shm_bytes, pids_limit=spec.pids_limit,
            read_only=True, tmpfs={"/tmp": f"rw,nosuid,nodev,size={spec.memory_bytes},mode=1777",
                                   **_volume_tmpfs(spec, image_volumes, mounts)},
            cap_drop=["ALL"], security_opt=["no-new-privileges"], init=True, runtime=self.runtime,
        )
        if spec.network:
            kwargs["network"] = spec.network
        else:
            kwargs["network_mode"] = "none"
        if spec.privileged:
            kwargs["privileged"] = True
        if spec.gpus:
            kwargs["device_requests"] = [docker_request(spec.gpus)]
        return kwargs

    def describe(self, spec: SandboxSpec) -> dict:
        with _daemon_errors():
            image = self.client.images.get(spec.image)
        described = {"backend": self.name, "runtime": self.runtime, "image": spec.image, "image_id": image.id,
                     "runner": self.runner_name}
        environment = image_environment(image.labels or {})
        return {**described, "image_environment": environment} if environment else described

    def remove_stale(self, prefix: str = "medalboard-") -> int:
        """This runner's own leftover sandboxes (its name on the label); other runners' are left alone."""
        with _daemon_errors():
            mine = {"label": [f"{name}={value}" for name, value in self.labels.items()]}
            # One the daemon is already removing is not left over (runsc's take a moment to go).
            stale = [c for c in self.client.containers.list(all=True, filters=mine)
                     if c.name.startswith(prefix) and c.status != "removing"]
            for container in stale:
                _remove(container)
        return len(stale)

    def _create(self, spec: SandboxSpec):
        try:
            return self.client.containers.create(**self.container_kwargs(spec, self._declared_volumes(spec)))
        except docker.errors.ImageNotFound as exc:
            raise ImageNotFound(self._missing_image(spec.image)) from exc
        except docker.errors.NotFound as exc:  # e.g. the egress network does not exist
            raise StartFailed(f"sandbox {spec.name}: {_explain(exc)}") from exc
        except docker.errors.APIError as exc:
            if exc.status_code != 409:
                raise StartFailed(f"sandbox {spec.name}: {_explain(exc)}") from exc
        # 409: a container of this very attempt is left over (the runner died after creating it), or
        # another runner on this Docker host uses the name: only our own is ours to remove.
        existing = self.client.containers.get(spec.name)
        labels = existing.labels or {}
        if any(labels.get(name) != value for name, value in self.labels.items()):
            owner = labels.get(RUNNER_LABEL)
            whose = f"runner {owner!r}" if owner else "something else"
            if owner == self.runner_name:
                whose = f"a runner {owner!r} of another site"
            raise StartFailed(f"sandbox {spec.name}: the name is taken by a container of {whose} on this Docker host")
        _remove(existing)
        return self.client.containers.create(**self.container_kwargs(spec, self._declared_volumes(spec)))

    def _declared_volumes(self, spec: SandboxSpec) -> list[str]:
        """The image's VOLUME paths, each of which Docker would make a folder on the host's disk."""
        config = self.client.images.get(spec.image).attrs.get("Config") or {}
        return sorted(config.get("Volumes") or {})

    def _check_daemon_network(self, name: str | None) -> None:
        """What the daemon means by `name` must be the listed network itself: Docker also takes an id or
        an id's prefix for a network, so a listed name no network has could reach the host's."""
        if not name:
            return
        with _daemon_errors():
            try:
                attrs = self.client.networks.get(name).attrs
            except docker.errors.NotFound:
                raise NetworkRefused(f"the network {name!r} does not exist on this Docker host") from None
        if attrs.get("Name") != name:
            raise NetworkRefused(f"the network {name!r} is the id of network {attrs.get('Name')!r}, not its name")
        if attrs.get("Driver") in ("host", "null") or (attrs.get("Options") or {}).get(DEFAULT_BRIDGE) == "true":
            raise NetworkRefused(f"the network {name!r} is Docker's {attrs.get('Driver')} network, never a sandbox's")

    def _missing_image(self, image: str) -> str:
        return f"image {image!r} does not exist on runner {self.runner_name}; " + BUILD_HINT.format(image=image)

    @staticmethod
    def _prepare_folders(spec: SandboxSpec) -> None:
        for folder in (spec.data_dir, spec.tools_dir):
            if not folder.is_dir():
                raise StartFailed(f"sandbox {spec.name}: {folder} is not a folder")
        for folder in (spec.host_submission_dir, spec.host_logs_dir, spec.host_code_dir, *_home(spec)):
            folder.mkdir(parents=True, exist_ok=True)
            if os.getuid() == 0:
                os.chown(folder, AGENT_UID, AGENT_UID)
        if spec.workspace_dir is not None and os.getuid() == 0:
            _chown_tree(spec.workspace_dir)


class DockerSandbox(Sandbox):
    def __init__(self, spec: SandboxSpec, container) -> None:
        self.spec = spec
        self._container = container
        self._removed = False
        self._started = time.time()
        self._stopped = False  # this runner asked the engine to stop it

    @property
    def id(self) -> str:
        return self._container.id

    def poll(self) -> int | None:
        state = self._state()
        if state["Status"] in ("exited", "dead"):
            return int(state["ExitCode"])
        return None

    def stop(self, grace_s: float = 5.0) -> int | None:
        self._stopped = True
        with _daemon_errors():
            self._container.stop(timeout=max(0, math.ceil(grace_s)))
        return self.poll()

    def end_cause(self) -> str:
        """The kernel's OOM killer (Docker's State.OOMKilled: any process of the container, the agent
        itself or a child it outlived), else a kill through the engine this runner did not send (a
        `kill` event of the container: `docker kill`, `docker stop`, another runner's clean-up)."""
        state = self._state()
        if state.get("OOMKilled"):
            return OUT_OF_MEMORY
        if self._stopped:
            return ""
        with _daemon_errors():
            # until: the events up to now only (a stream without it waits for more); the daemon keeps
            # its last events, and the kill comes just before the exit this is asked about.
            events = self._container.client.api.events(
                since=f"{self._started - 1:.3f}", until=f"{time.time() + 0.001:.3f}", decode=True,
                filters={"container": self._container.id, "event": "kill"})
            killed = any(event.get("Action") == "kill" for event in events)
        return KILLED_OUTSIDE if killed else ""

    def remove(self) -> None:
        if self._removed:
            return
        with _daemon_errors():
            self._save_output()
            _remove(self._container)
        self._removed = True

    def output_tail(self, max_bytes: int = 16_384) -> str:
        if self._removed:
            return file_tail(self.spec.host_output_log, max_bytes)
        with _daemon_errors():
            try:
                data = self._container.logs(stdout=True, stderr=True, tail=max(100, max_bytes // 40))
            except docker.errors.APIError:  # gone, or "dead or marked for removal" (409): what was kept
                return file_tail(self.spec.host_output_log, max_bytes)
        return data[-max_bytes:].decode("utf-8", errors="replace")

    def _state(self) -> dict:
        with _daemon_errors():
            return self._container.client.api.inspect_container(self._container.id)["State"]

    def _save_output(self) -> None:
        try:
            # follow=False: a stream follows a running container's output until it exits (the SDK's
            # default), which held remove() until the agent's own end, past any time limit.
            chunks = self._container.logs(stdout=True, stderr=True, stream=True, follow=False)
            self.spec.host_output_log.parent.mkdir(parents=True, exist_ok=True)
            with open(self.spec.host_output_log, "wb") as log:
                for chunk in chunks:
                    log.write(chunk)
        except docker.errors.NotFound:
            pass  # already gone: whatever was saved before stays


def _mounts(spec: SandboxSpec) -> list[Mount]:
    def bind(target: str, source, read_only: bool) -> Mount:
        return Mount(target=target, source=str(source.resolve()), type="bind", read_only=read_only)

    return [
        *(bind("/home", home, False) for home in _home(spec)),
        bind(PATHS.data, spec.data_dir, True),
        bind(PATHS.submission, spec.host_submission_dir, False),
        bind(PATHS.logs, spec.host_logs_dir, False),
        bind(PATHS.code, spec.host_code_dir, False),
        bind(PATHS.tools, spec.tools_dir, True),
        *(bind(posixpath.dirname(SANDBOX_SOCKET), socket.parent, True) for socket in _gateway(spec)),
        *_workspace_mounts(spec, bind),
    ]


def _volume_tmpfs(spec: SandboxSpec, volumes: Iterable[str], mounts: list[Mount]) -> dict[str, str]:
    """A bounded tmpfs at each path the image declares a volume (Docker then makes none there), but
    where the sandbox already mounts something. A path no tmpfs may cover refuses the image, and so
    does one beneath a read-only mount (its mount point would be made in the host's folder)."""
    paths = {posixpath.normpath(v) for v in volumes}
    read_only = [m["Target"] for m in mounts if m.get("ReadOnly")]
    bad = sorted(p for p in paths if not p.startswith("/") or p == "/" or
                 any(p == top or p.startswith(top + "/") for top in ("/proc", "/sys", "/dev")) or
                 any(p.startswith(top + "/") for top in read_only))
    if bad or len(paths) > MAX_IMAGE_VOLUMES:
        what = f"volumes at {', '.join(bad)}" if bad else f"{len(paths)} volumes (at most {MAX_IMAGE_VOLUMES})"
        raise StartFailed(f"sandbox {spec.name}: the image {spec.image} declares {what}; refused")
    size = min(IMAGE_VOLUME_BYTES, spec.memory_bytes)
    mounted = {m["Target"] for m in mounts}
    return {p: f"rw,nosuid,nodev,size={size},mode=1777" for p in sorted(paths - mounted - {"/tmp"})}


def _paths(spec: SandboxSpec) -> SandboxPaths:
    return dataclasses.replace(PATHS, workspace=WORKSPACE) if spec.workspace_dir is not None else PATHS


def _workspace_mounts(spec: SandboxSpec, bind) -> list[Mount]:
    """The workspace, writable, and over it each read-only file the runner copied there, read-only."""
    if spec.workspace_dir is None:
        return []
    files = [rel for rel in spec.read_only_files if (spec.workspace_dir / rel).is_file()]
    return [bind(WORKSPACE, spec.workspace_dir, False),
            *(bind(posixpath.join(WORKSPACE, rel), spec.workspace_dir / rel, True)
              for rel in files[:MAX_READ_ONLY_MOUNTS])]


def _chown_tree(root) -> None:
    """The workspace the runner (root) copied, handed to the sandbox's user; links are not followed."""
    for folder, _dirs, names in os.walk(root):
        os.chown(folder, AGENT_UID, AGENT_UID, follow_symlinks=False)
        for name in names:
            os.chown(os.path.join(folder, name), AGENT_UID, AGENT_UID, follow_symlinks=False)


def _gateway(spec: SandboxSpec) -> tuple:
    """The LLM gateway's socket, in a folder of its own (a connect() needs no write access)."""
    return (spec.gateway_socket,) if spec.gateway_socket is not None else ()


def _home(spec: SandboxSpec) -> tuple:
    return (spec.home_dir,) if spec.home_dir is not None else ()


def _sandbox_user() -> str:
    uid = os.getuid()
    return f"{AGENT_UID}:{AGENT_UID}" if uid == 0 else f"{uid}:{os.getgid()}"


def image_environment(labels: dict[str, str]) -> dict[str, str]:
    """What an image says it holds (agent images built FROM mlebench-env inherit its labels)."""
    return {key: labels[label] for label, key in IMAGE_ENV_LABELS.items() if labels.get(label)}


def _remove(container) -> None:
    try:
        container.remove(force=True, v=True)  # with any anonymous volume, should one ever be made
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        if "already in progress" not in str(exc):
            raise


def _explain(exc: docker.errors.APIError) -> str:
    text = str(exc.explanation or exc)
    if "could not select device driver" in text:
        text += " (GPUs need the NVIDIA Container Toolkit on the runner: nvidia-ctk runtime configure)"
    return text


class _daemon_errors:
    """Turn 'cannot talk to the daemon' into BackendUnavailable with where it was looked for."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback):
        if exc is None or isinstance(exc, (docker.errors.APIError, BackendUnavailable)):
            return False
        if isinstance(exc, (*CONNECTION_ERRORS, docker.errors.DockerException)):
            where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
            raise BackendUnavailable(f"Docker daemon not reachable at {where}: {exc}") from exc
        return False


def site_key() -> str:
    """Which site this runner works for, as a short digest of the database it claims its tasks in
    (never the database's address itself: a label is readable by anyone on the Docker host)."""
    from django.db import connection

    db = connection.settings_dict
    where = "|".join(str(db.get(part) or "") for part in ("ENGINE", "HOST", "PORT", "NAME"))
    return hashlib.sha256(where.encode()).hexdigest()[:16]

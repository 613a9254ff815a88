"""The local backend: the agent as a plain subprocess of the runner, in a scratch folder.

It is the embedded default, for machines without Docker. The agent gets MLE-bench's layout as host
folders (spec.workdir/{submission,logs,code}; the data and tools folders are the host folders
themselves), a fresh environment (nothing of the runner's: no secrets, no database URL), HOME inside
the workdir, a minimal PATH whose first entry is the runner's own Python, and:

- TMPDIR a short folder of its own in the system's temporary folder (`medalboard-tmp-<hash of the
  workdir>`, removed with the sandbox), not inside the workdir: a Unix socket's path is at most 107
  bytes, and programs bind theirs under TMPDIR (multiprocessing's resource sharer, which PyTorch's
  DataLoader workers use to pass tensors, Jupyter kernels, Ray); under a deep workdir they failed with
  "AF_UNIX path too long", and a DataLoader then waits for its worker for ever;

- its own session and process group, so stop() reaches every child: SIGTERM, then SIGKILL after the
  grace period; the files stay;
- rlimits set before exec: RLIMIT_DATA (heap and private mappings, per process; unlike RLIMIT_AS it
  leaves CUDA's large address-space reservations alone), no core dumps, and RLIMIT_CPU as a backstop
  of time limit x cores should the runner die without stopping it;
- CPU affinity to ceil(cpus) cores, and CUDA_VISIBLE_DEVICES set to exactly spec.gpus ("" for none),
  counted in PCI bus order (CUDA_DEVICE_ORDER) as NVML and nvidia-smi count them.

THIS IS NOT A SECURITY BOUNDARY. The agent runs as the runner's user and can read anything that user
can read, the private answers included, and reach the network. Use it only for trusted agents such
as the built-in baseline; run anything else with the Docker backend.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runner.backends.base import Backend, Sandbox, SandboxPaths, SandboxSpec, StartFailed, file_tail, sandbox_env
from runner.backends.gpus import local_environment

POLL_INTERVAL_S = 0.05
OWNER_VARIABLE = "MEDALBOARD_OWNER"  # "<site key>/<runner name>": whose sandbox a process is


class LocalBackend(Backend):
    name = "local"

    def __init__(self, *, runner_name: str = "", site: str = "") -> None:
        self._next_core = itertools.count()
        self.runner_name = runner_name or os.environ.get("MEDALBOARD_RUNNER_NAME") or os.uname().nodename
        self._site = site

    @property
    def site(self) -> str:
        """Which site this runner works for (runner.backends.docker.site_key), looked up when first needed."""
        if not self._site:
            from runner.backends.docker import site_key

            self._site = site_key()
        return self._site

    @property
    def owner(self) -> str:
        """What marks a process as a sandbox of this runner (its name) for this site, whichever process
        of the runner started it."""
        return f"{self.site}/{self.runner_name}"

    def check(self) -> None:
        return None  # a subprocess can always be started

    def image_exists(self, image: str) -> bool:
        return True  # the local backend ignores images

    def paths(self, spec: SandboxSpec) -> SandboxPaths:
        return SandboxPaths(
            data=str(spec.data_dir.resolve()), submission=str(spec.host_submission_dir.resolve()),
            logs=str(spec.host_logs_dir.resolve()), code=str(spec.host_code_dir.resolve()),
            tools=str(spec.tools_dir.resolve()),
            workspace=str(spec.workspace_dir.resolve()) if spec.workspace_dir is not None else "",
        )

    def start(self, spec: SandboxSpec) -> LocalSandbox:
        for folder in (spec.host_submission_dir, spec.host_logs_dir, spec.host_code_dir, spec.runner_dir,
                       *_scratch_dirs(spec)):
            folder.mkdir(parents=True, exist_ok=True)
        _scratch_dirs(spec)[1].chmod(0o700)
        log = open(spec.host_output_log, "ab")
        try:
            process = subprocess.Popen(
                spec.command, cwd=spec.workspace_dir or spec.host_code_dir, env=self.environment(spec),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
                preexec_fn=_limits(spec, self._cores(spec)),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.close()
            raise StartFailed(f"cannot run {spec.command[:1]!r} for {spec.name}: {exc}") from exc
        return LocalSandbox(spec, process, log)

    def environment(self, spec: SandboxSpec) -> dict[str, str]:
        home, tmp = _scratch_dirs(spec)
        return {
            **sandbox_env(spec, self.paths(spec)),
            "HOME": str(home.resolve()), "TMPDIR": str(tmp.resolve()), "LANG": "C.UTF-8",
            "PATH": f"{spec.bin_dir or Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            **local_environment(spec.gpus),
            "MEDALBOARD_RUNNER": _identity(os.getpid()), OWNER_VARIABLE: self.owner,
        }

    def _cores(self, spec: SandboxSpec) -> set[int]:
        """ceil(cpus) of the runner's cores, rotating so that concurrent runs spread out."""
        allowed = sorted(os.sched_getaffinity(0))
        if spec.core_count >= len(allowed):
            return set(allowed)
        first = next(self._next_core) * spec.core_count
        return {allowed[(first + i) % len(allowed)] for i in range(spec.core_count)}

    def remove_stale(self, prefix: str = "medalboard-") -> int:
        """Kill the process groups of this runner's own sandboxes whose runner process is gone. Each
        sandbox carries its name (MEDALBOARD_SANDBOX), its runner's name and site (MEDALBOARD_OWNER) and
        its runner process's identity (MEDALBOARD_RUNNER: pid and start time, so a reused pid does not
        count). Only processes in this runner's own pid namespace are looked at (a container's are
        never a local sandbox, whatever their environment says); a sandbox of another runner or site,
        of a live runner process, or with no owner at all (every backend sets MEDALBOARD_SANDBOX, only
        this one the rest: a Docker sandbox's processes) is left alone."""
        found = {_process_group(pid) for pid, owner, runner in _sandbox_processes(prefix)
                 if owner == self.owner and runner and not _alive(runner)}
        groups = {group for group in found if group is not None and group != os.getpgrp()}
        for group in groups:
            _kill_group(group, signal.SIGKILL)
        return len(groups)


class LocalSandbox(Sandbox):
    def __init__(self, spec: SandboxSpec, process: subprocess.Popen, log) -> None:
        self.spec = spec
        self._process = process
        self._log = log
        self._group_gone = False

    @property
    def id(self) -> str:
        return str(self._process.pid)

    def poll(self) -> int | None:
        return _exit_code(self._process.poll())

    def stop(self, grace_s: float = 5.0) -> int | None:
        if self._group_alive():
            _kill_group(self._process.pid, signal.SIGTERM)
            deadline = time.monotonic() + grace_s
            while time.monotonic() < deadline and (self._process.poll() is None or self._group_alive()):
                time.sleep(POLL_INTERVAL_S)
        self._kill_rest()
        return _exit_code(self._process.returncode)

    def remove(self) -> None:
        self._kill_rest()
        self._log.close()
        shutil.rmtree(_scratch_dirs(self.spec)[1], ignore_errors=True)

    def output_tail(self, max_bytes: int = 16_384) -> str:
        return file_tail(self.spec.host_output_log, max_bytes)

    def _kill_rest(self) -> None:
        if self._group_alive():
            _kill_group(self._process.pid, signal.SIGKILL)
        self._process.wait()

    def _group_alive(self) -> bool:
        if not self._group_gone:
            self._process.poll()  # reap the leader so that a finished group really is empty
            self._group_gone = not _kill_group(self._process.pid, 0)
        return not self._group_gone


SHORT_TMP = 24  # the most characters of a temporary folder a sandbox's TMPDIR may go under


def _scratch_dirs(spec: SandboxSpec) -> tuple[Path, Path]:
    """HOME in the workdir; TMPDIR a folder of at most about 50 characters, so that a Unix socket bound
    under it (pymp-XXXXXXXX/listener-XXXXXXXX and longer) stays within the 107 bytes the kernel allows."""
    system = tempfile.gettempdir()
    base = Path(system if len(system) <= SHORT_TMP else "/tmp")
    digest = hashlib.sha256(str(spec.workdir.resolve()).encode()).hexdigest()[:16]
    return spec.workdir / "home", base / f"medalboard-tmp-{digest}"


def _limits(spec: SandboxSpec, cores: set[int]):
    """The preexec function: runs in the child between fork and exec, so only plain system calls."""
    memory = spec.memory_bytes
    cpu_seconds = int(spec.time_limit_s * spec.core_count) + 60

    def apply() -> None:
        _set_limit(resource.RLIMIT_DATA, memory)
        _set_limit(resource.RLIMIT_CORE, 0)
        _set_limit(resource.RLIMIT_CPU, cpu_seconds)
        os.sched_setaffinity(0, cores)

    return apply


def _set_limit(kind: int, value: int) -> None:
    _soft, hard = resource.getrlimit(kind)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (value, value))


def _kill_group(group: int, sig: int) -> bool:
    """Send `sig` to a process group; False if the group no longer exists."""
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists but is not ours: never ours to kill
    return True


def _exit_code(returncode: int | None) -> int | None:
    if returncode is None:
        return None
    return 128 - returncode if returncode < 0 else returncode


def _sandbox_processes(prefix: str):
    """(pid, owner, runner identity) of every process in this process's pid namespace of a sandbox
    whose name starts with `prefix` ("" for a variable the process does not have)."""
    marker = f"MEDALBOARD_SANDBOX={prefix}".encode()
    namespace = _pid_namespace("self")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue  # gone, or another user's process
        if not any(item.startswith(marker) for item in environ):
            continue
        if namespace is None or _pid_namespace(entry.name) != namespace:
            continue  # a container's process (or gone): never a local sandbox's
        yield int(entry.name), _variable(environ, OWNER_VARIABLE), _variable(environ, "MEDALBOARD_RUNNER")


def _variable(environ: list[bytes], name: str) -> str:
    prefix = f"{name}=".encode()
    return next((item[len(prefix):].decode(errors="replace") for item in environ if item.startswith(prefix)), "")


def _pid_namespace(pid: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _identity(pid: int) -> str:
    """pid:start-time (clock ticks since boot), unique for the machine's uptime; "" if pid is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return f"{pid}:{stat.rsplit(') ', 1)[1].split()[19]}"  # field 22; the name before ") " may hold spaces


def _alive(identity: str) -> bool:
    return bool(identity) and _identity(int(identity.split(":", 1)[0])) == identity


def _process_group(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None

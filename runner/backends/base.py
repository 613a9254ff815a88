"""The one interface every execution backend implements.

A sandbox gets MLE-bench's layout: the competition's public data (read-only), writable submission,
logs and code folders, and the agent tools folder (read-only). The private answers are never part of
a spec, so no backend can mount them. Inside the sandbox the agent finds the folders through
environment variables the backend always sets (DATA_DIR, SUBMISSION_DIR, LOGS_DIR, CODE_DIR,
TOOLS_DIR, TIME_LIMIT_SECONDS); under Docker they are /home/data, /home/submission, /home/logs,
/home/code and /opt/medalboard.

The runner's task (runner/remote/task.py) owns the loop: start, poll, stream, stop at the wall clock limit
(SIGTERM, then SIGKILL after a grace period), always remove.
"""

from __future__ import annotations

import abc
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

TOOLS_DIR = Path(__file__).resolve().parents[1] / "agent_tools"  # mounted read-only in every sandbox
OUTPUT_LOG = "agent-output.log"  # the agent's stdout+stderr, kept in the runner's folder by every backend


# What Sandbox.end_cause() can say, as the task and run say it.
KILLED_OUTSIDE = "killed from outside the runner"
OUT_OF_MEMORY = "killed by the kernel (out of memory)"


class BackendUnavailable(Exception):
    """The engine cannot be reached (e.g. the Docker daemon is down): transient, worth retrying."""


class ImageNotFound(Exception):
    """The agent image does not exist on this runner: permanent, the message says which image."""


class StartFailed(Exception):
    """The sandbox cannot run the command (e.g. its executable does not exist): permanent."""


@dataclass(frozen=True)
class SandboxPaths:
    """Where the agent sees each folder, as the agent's own paths (inside the sandbox)."""

    data: str
    submission: str
    logs: str
    code: str
    tools: str
    workspace: str = ""  # a research task's workspace (the agent's current folder); "" for competitions

    def env(self) -> dict[str, str]:
        return {
            "DATA_DIR": self.data, "SUBMISSION_DIR": self.submission, "LOGS_DIR": self.logs,
            "CODE_DIR": self.code, "TOOLS_DIR": self.tools,
            **({"WORKSPACE_DIR": self.workspace} if self.workspace else {}),
        }

    @property
    def cwd(self) -> str:
        """Where the agent starts: its research workspace, else the code folder."""
        return self.workspace or self.code


@dataclass(frozen=True)
class SandboxSpec:
    """Everything a backend needs to start one agent run. Host paths are on the runner machine."""

    name: str  # unique and stable per attempt, e.g. "medalboard-gpu-box-1-task-12-a1"; used as the container name
    command: list[str]  # argv run inside the sandbox
    data_dir: Path  # host folder: the competition's public prepared data + description.md (read-only)
    workdir: Path  # host scratch folder; the backend creates submission/, logs/, code/ beneath it
    tools_dir: Path  # host folder with the agent tools (baseline agent, format checker), read-only
    image: str = ""  # Docker image; the local backend ignores it
    env: dict[str, str] = field(default_factory=dict)  # secrets included: only ever passed to the sandbox
    gpus: tuple[int, ...] = ()  # exactly these device indices, nothing else
    cpus: float = 1.0
    memory_bytes: int = 4 << 30
    shm_bytes: int = 1 << 30
    pids_limit: int = 1024
    time_limit_s: float = 3600.0
    network: str | None = None  # None: no network at all; else the name of an egress network
    gateway_socket: Path | None = None  # the LLM gateway's Unix socket, bind-mounted (runner.host.llm_access)
    home_dir: Path | None = None  # host folder mounted writable at /home, the others beneath (MLE-bench agents)
    privileged: bool = False  # only for agents the site allowed to ask for it (AGENTS_ALLOW_PRIVILEGED)
    # A research task's writable workspace (a copy of its env/; runner.research.workspace), the agent's
    # current folder, and the files below it the task gives read-only: mounted so where the engine can
    # (Docker), checked unchanged afterwards either way.
    workspace_dir: Path | None = None
    read_only_files: tuple[str, ...] = ()
    # The local backend's first PATH entry instead of the runner's own interpreter's folder: a research
    # environment's venv (runner.research.environment). Docker takes PATH from the image.
    bin_dir: str = ""

    @property
    def host_submission_dir(self) -> Path:
        return self.workdir / "submission"

    @property
    def host_logs_dir(self) -> Path:
        return self.workdir / "logs"

    @property
    def host_code_dir(self) -> Path:
        return self.workdir / "code"

    @property
    def runner_dir(self) -> Path:
        """The runner's own folder for this sandbox, beside the workdir: never mounted into the sandbox,
        so nothing the agent plants there (a link, a FIFO) can redirect what the runner writes."""
        return self.workdir.parent / f"{self.workdir.name}.runner"

    @property
    def host_output_log(self) -> Path:
        return self.runner_dir / OUTPUT_LOG

    @property
    def core_count(self) -> int:
        """Whole cores the agent may use: ceil(cpus), at least 1."""
        return max(1, math.ceil(self.cpus))


def sandbox_env(spec: SandboxSpec, paths: SandboxPaths) -> dict[str, str]:
    """The environment every backend gives the agent: the spec's own variables, then (winning over
    them) its folders, its time limit, thread counts sized to its cores and the sandbox's name."""
    threads = str(spec.core_count)
    return {
        **spec.env,
        **paths.env(),
        "TIME_LIMIT_SECONDS": str(int(spec.time_limit_s)),
        "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
        "MEDALBOARD_SANDBOX": spec.name,
    }


def file_tail(path: Path, max_bytes: int) -> str:
    """The last `max_bytes` of a log file of the runner's own as text ("" if there is none yet)."""
    try:
        with open(path, "rb", opener=_no_follow) as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - max_bytes))
            return log.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _no_follow(path, flags):
    return os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)


class Sandbox(abc.ABC):
    """A started agent run. Files the agent wrote stay in spec.workdir after stop() and remove()."""

    spec: SandboxSpec

    @property
    @abc.abstractmethod
    def id(self) -> str:
        """The engine's id (container id, process id) for logs and pages."""

    @abc.abstractmethod
    def poll(self) -> int | None:
        """The exit code if the agent has finished, else None. Never blocks. A signal N is reported
        as 128 + N, as a shell and Docker do (SIGKILL: 137)."""

    @abc.abstractmethod
    def stop(self, grace_s: float = 5.0) -> int | None:
        """Ask the agent to stop (SIGTERM), kill it after grace_s (SIGKILL); return its exit code."""

    @abc.abstractmethod
    def remove(self) -> None:
        """Release everything the engine holds (the container); idempotent, safe after a crash."""

    @abc.abstractmethod
    def output_tail(self, max_bytes: int = 16_384) -> str:
        """The end of the agent's stdout and stderr together, as text (for the log tail on pages)."""

    def end_cause(self) -> str:
        """After the agent ended: who or what ended it, as far as the engine can tell, other than the
        agent itself or this runner's stop(): KILLED_OUTSIDE, OUT_OF_MEMORY, or "" (nothing known)."""
        return ""


class Backend(abc.ABC):
    name: str

    @abc.abstractmethod
    def check(self) -> None:
        """Raise BackendUnavailable if the engine cannot run sandboxes now."""

    @abc.abstractmethod
    def image_exists(self, image: str) -> bool:
        """Whether `image` can be started here without any registry (the local backend: always)."""

    @abc.abstractmethod
    def paths(self, spec: SandboxSpec) -> SandboxPaths:
        """The folders as the agent sees them."""

    @abc.abstractmethod
    def start(self, spec: SandboxSpec) -> Sandbox:
        """Create the sandbox and start the command. Raises BackendUnavailable or ImageNotFound."""

    def describe(self, spec: SandboxSpec) -> dict:
        """How a sandbox of `spec` runs here, recorded on its task so that it can be run again."""
        return {"backend": self.name}

    def remove_stale(self, prefix: str = "medalboard-") -> int:
        """Remove sandboxes left by a runner that died (containers named with `prefix`); how many."""
        return 0

"""What a runner machine has: its GPUs, CPUs and memory, detected once at start.

    hardware = detect()
    runner.gpus = hardware.gpus_json()   # [{index, name, memory_mb, uuid, driver}, ...]

GPUs come from pluggable sources tried in order, like the trajectory importers: NVML through
`pynvml` (the nvidia-ml-py package), then `nvidia-smi`'s CSV output, else none. A source that is
missing or fails (no driver, no device) passes to the next. CPUs are the cores this process may use
(its affinity), capped by a cgroup CPU quota; memory is the machine's, capped by a cgroup limit.
"""

from __future__ import annotations

import math
import os
import shutil
import socket
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
MEMINFO = Path("/proc/meminfo")
NVIDIA_SMI_QUERY = ["--query-gpu=index,name,memory.total,uuid,driver_version", "--format=csv,noheader,nounits"]


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    memory_mb: int
    uuid: str
    driver: str = ""  # the NVIDIA driver's version ("550.54.15"): a run records it beside the model

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Hardware:
    gpus: list[Gpu] = field(default_factory=list)
    cpu_count: int = 1
    memory_gb: float = 0.0
    hostname: str = ""
    gpu_source: str = ""  # which source found the GPUs ("nvml", "nvidia-smi"), "" for none

    def gpus_json(self) -> list[dict]:
        """The GPUs as stored in Runner.gpus."""
        return [gpu.to_json() for gpu in self.gpus]

    def to_json(self) -> dict:
        return {**asdict(self), "gpus": self.gpus_json()}


class GpuSourceError(Exception):
    """This source cannot say (library or tool missing, driver not loaded): try the next one."""


def nvml_gpus() -> list[Gpu]:
    try:
        import pynvml
    except ImportError as exc:
        raise GpuSourceError(f"pynvml not installed: {exc}") from exc
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # pynvml raises NVMLError subclasses, or OSError without the library
        raise GpuSourceError(f"NVML unavailable: {exc}") from exc
    try:
        driver = _text(pynvml.nvmlSystemGetDriverVersion())
        return [_nvml_gpu(pynvml, index, driver) for index in range(pynvml.nvmlDeviceGetCount())]
    except Exception as exc:
        raise GpuSourceError(f"NVML query failed: {exc}") from exc
    finally:
        pynvml.nvmlShutdown()


def _nvml_gpu(pynvml, index: int, driver: str) -> Gpu:
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return Gpu(
        index=index, name=_text(pynvml.nvmlDeviceGetName(handle)),
        memory_mb=int(pynvml.nvmlDeviceGetMemoryInfo(handle).total) // (1024 * 1024),
        uuid=_text(pynvml.nvmlDeviceGetUUID(handle)), driver=driver,
    )


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value  # older pynvml returned bytes


def nvidia_smi_gpus() -> list[Gpu]:
    binary = shutil.which("nvidia-smi")
    if binary is None:
        raise GpuSourceError("nvidia-smi not on PATH")
    try:
        result = subprocess.run([binary, *NVIDIA_SMI_QUERY], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GpuSourceError(f"nvidia-smi failed: {exc}") from exc
    if result.returncode != 0:
        raise GpuSourceError(f"nvidia-smi exited {result.returncode}: {result.stderr.strip()[:300]}")
    return [_smi_gpu(line) for line in result.stdout.splitlines() if line.strip()]


def _smi_gpu(line: str) -> Gpu:
    fields = [part.strip() for part in line.split(",")]
    if len(fields) != 5:
        raise GpuSourceError(f"unexpected nvidia-smi line: {line!r}")
    index, name, memory, uuid, driver = fields
    try:
        return Gpu(index=int(index), name=name, memory_mb=int(float(memory)), uuid=uuid, driver=driver)
    except ValueError as exc:
        raise GpuSourceError(f"unexpected nvidia-smi line: {line!r}") from exc


# name -> source, in the order they are tried
GPU_SOURCES: dict[str, Callable[[], list[Gpu]]] = {"nvml": nvml_gpus, "nvidia-smi": nvidia_smi_gpus}


def detect_gpus() -> tuple[list[Gpu], str]:
    """The GPUs from the first source that can say, and that source's name; ([], "") without any."""
    for name, source in GPU_SOURCES.items():
        try:
            return source(), name
        except GpuSourceError:
            continue
    return [], ""


def cpu_count(cgroup_root: Path = CGROUP_ROOT) -> int:
    cores = len(os.sched_getaffinity(0))
    quota = _cgroup_cpu_quota(cgroup_root)
    return max(1, min(cores, math.ceil(quota))) if quota else cores


def _cgroup_cpu_quota(root: Path) -> float | None:
    """CPUs allowed by a cgroup quota (v2 cpu.max, v1 cpu.cfs_quota_us), None if unlimited."""
    v2 = _read(root / "cpu.max")
    if v2:
        quota, _, period = v2.partition(" ")
        return None if quota == "max" else int(quota) / int(period or 100_000)
    quota, period = _read(root / "cpu" / "cpu.cfs_quota_us"), _read(root / "cpu" / "cpu.cfs_period_us")
    if quota and period and int(quota) > 0:
        return int(quota) / int(period)
    return None


def memory_gb(meminfo: Path = MEMINFO, cgroup_root: Path = CGROUP_ROOT) -> float:
    total = _meminfo_total(meminfo)
    limit = _cgroup_memory_limit(cgroup_root)
    if limit is not None and (total == 0 or limit < total):
        total = limit
    return round(total / 1024**3, 1)


def _meminfo_total(path: Path) -> int:
    for line in (_read(path) or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024  # kB
    return 0


def _cgroup_memory_limit(root: Path) -> int | None:
    for path in (root / "memory.max", root / "memory" / "memory.limit_in_bytes"):
        value = _read(path)
        if value and value != "max":
            limit = int(value)
            return limit if limit < 1 << 60 else None  # v1 writes "no limit" as a huge number
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, ValueError):
        return None


def detect() -> Hardware:
    gpus, source = detect_gpus()
    return Hardware(
        gpus=gpus, cpu_count=cpu_count(), memory_gb=memory_gb(), hostname=socket.gethostname(), gpu_source=source
    )

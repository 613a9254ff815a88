"""Hardware detection: GPUs from NVML, else nvidia-smi, else none; CPUs and memory with cgroup caps.

The GPU sources are faked: a fake `pynvml` module put in sys.modules, and a fake `nvidia-smi`
script on PATH, so the tests show what a runner with 2x A10 or 8x H100 would register.
"""

from __future__ import annotations

import os
import sys
import types

import pytest

from runner.host import hardware
from runner.host.hardware import Gpu

A10_MB = 23028
H100_MB = 81559
DRIVER = "550.54.15"


class FakeNVMLError(Exception):
    pass


def fake_pynvml(names: list[str], memory_mb: int, *, fail_init: bool = False) -> types.ModuleType:
    module = types.ModuleType("pynvml")
    module.NVMLError = FakeNVMLError
    state = {"initialised": 0}

    def init():
        if fail_init:
            raise FakeNVMLError("NVML Shared Library Not Found")
        state["initialised"] += 1

    module.nvmlInit = init
    module.nvmlShutdown = lambda: state.update(initialised=state["initialised"] - 1)
    module.nvmlDeviceGetCount = lambda: len(names)
    module.nvmlDeviceGetHandleByIndex = lambda i: ("handle", i)
    module.nvmlDeviceGetName = lambda h: names[h[1]].encode()  # old pynvml: bytes
    module.nvmlSystemGetDriverVersion = lambda: DRIVER
    module.nvmlDeviceGetUUID = lambda h: f"GPU-{h[1]:08x}-fake"
    module.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=memory_mb * 1024 * 1024, used=0)
    module.state = state
    return module


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    """An empty folder that is the whole PATH, so the real nvidia-smi (if any) is not seen."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


def write_nvidia_smi(bin_dir, stdout: str, exit_code: int = 0) -> None:
    script = bin_dir / "nvidia-smi"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "expected = ['--query-gpu=index,name,memory.total,uuid,driver_version', '--format=csv,noheader,nounits']\n"
        "if sys.argv[1:] != expected:\n"
        "    sys.exit('unexpected arguments: %r' % sys.argv[1:])\n"
        f"sys.stdout.write({stdout!r})\n"
        f"sys.exit({exit_code})\n"
    )
    script.chmod(0o755)


def test_nvml_detects_two_a10(monkeypatch, bin_dir):
    fake = fake_pynvml(["NVIDIA A10", "NVIDIA A10"], A10_MB)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    gpus, source = hardware.detect_gpus()
    assert source == "nvml"
    assert gpus == [
        Gpu(index=0, name="NVIDIA A10", memory_mb=A10_MB, uuid="GPU-00000000-fake", driver=DRIVER),
        Gpu(index=1, name="NVIDIA A10", memory_mb=A10_MB, uuid="GPU-00000001-fake", driver=DRIVER),
    ]
    assert fake.state["initialised"] == 0  # shut down again


def test_nvidia_smi_detects_eight_h100_when_nvml_fails(monkeypatch, bin_dir):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml([], 0, fail_init=True))
    lines = "".join(f"{i}, NVIDIA H100 80GB HBM3, {H100_MB}, GPU-h100-{i}, 580.159.04\n" for i in range(8))
    write_nvidia_smi(bin_dir, lines)
    gpus, source = hardware.detect_gpus()
    assert source == "nvidia-smi"
    assert [g.index for g in gpus] == list(range(8))
    assert {g.name for g in gpus} == {"NVIDIA H100 80GB HBM3"}
    assert {g.memory_mb for g in gpus} == {H100_MB}
    assert gpus[7].uuid == "GPU-h100-7"
    assert {g.driver for g in gpus} == {"580.159.04"}


def test_no_pynvml_and_no_nvidia_smi_means_no_gpus(monkeypatch, bin_dir):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml -> ImportError
    assert hardware.detect_gpus() == ([], "")


def test_failing_nvidia_smi_means_no_gpus(monkeypatch, bin_dir):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml([], 0, fail_init=True))
    write_nvidia_smi(bin_dir, "", exit_code=9)  # e.g. "couldn't communicate with the NVIDIA driver"
    assert hardware.detect_gpus() == ([], "")


def test_garbled_nvidia_smi_output_is_not_taken_for_gpus(monkeypatch, bin_dir):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    write_nvidia_smi(bin_dir, "No devices were found\n")
    assert hardware.detect_gpus() == ([], "")


def test_nvml_is_preferred_over_nvidia_smi(monkeypatch, bin_dir):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(["NVIDIA A10"], A10_MB))
    write_nvidia_smi(bin_dir, "0, NVIDIA H100, 81559, GPU-x, 580.159.04\n")
    gpus, source = hardware.detect_gpus()
    assert (source, [g.name for g in gpus]) == ("nvml", ["NVIDIA A10"])


def test_detect_reports_gpus_as_runner_json(monkeypatch, bin_dir):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(["NVIDIA A10", "NVIDIA A10"], A10_MB))
    found = hardware.detect()
    assert found.gpus_json() == [
        {"index": 0, "name": "NVIDIA A10", "memory_mb": A10_MB, "uuid": "GPU-00000000-fake", "driver": DRIVER},
        {"index": 1, "name": "NVIDIA A10", "memory_mb": A10_MB, "uuid": "GPU-00000001-fake", "driver": DRIVER},
    ]
    assert found.cpu_count == hardware.cpu_count()
    assert found.hostname and found.memory_gb > 0
    assert found.to_json()["gpus"] == found.gpus_json()


def test_cpu_count_is_the_affinity_capped_by_a_cgroup_quota(tmp_path):
    cores = len(os.sched_getaffinity(0))
    assert hardware.cpu_count(tmp_path) == cores  # no cgroup files: the affinity
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert hardware.cpu_count(tmp_path) == cores
    (tmp_path / "cpu.max").write_text("50000 100000\n")  # half a core: still one whole core
    assert hardware.cpu_count(tmp_path) == 1


def test_cgroup_v1_cpu_quota(tmp_path):
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert hardware.cpu_count(tmp_path) == len(os.sched_getaffinity(0))
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    assert hardware.cpu_count(tmp_path) == 1


def test_memory_is_meminfo_capped_by_a_cgroup_limit(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       65856948 kB\nMemFree:        1000 kB\n")
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    assert hardware.memory_gb(meminfo, cgroup) == round(65856948 * 1024 / 1024**3, 1)  # 62.8
    (cgroup / "memory.max").write_text("max\n")
    assert hardware.memory_gb(meminfo, cgroup) == 62.8
    (cgroup / "memory.max").write_text(f"{16 * 1024**3}\n")
    assert hardware.memory_gb(meminfo, cgroup) == 16.0


def test_cgroup_v1_unlimited_memory_is_ignored(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       8388608 kB\n")
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert hardware.memory_gb(meminfo, tmp_path) == 8.0

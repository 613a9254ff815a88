"""scripts/gpu_check.py, the check a GPU machine runs, on a machine faked as one: nvidia-smi names an
H100, and the sandbox's `python` answers MLE-bench's start.sh lines as torch would, seeing the GPU only
where CUDA_VISIBLE_DEVICES gives it one. Its verdicts: passed, failed (a sandbox given no GPU that still
sees one), skipped (no torch)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_check.py"
H100 = "NVIDIA H100 80GB HBM3"
# What `python -c "<start.sh's line>"` prints, as torch and TensorFlow would under the sandbox's variables.
FAKE_PYTHON = r"""#!/bin/bash
case "$2" in
  *tensorflow*) echo "ModuleNotFoundError: No module named 'tensorflow'"; exit 1;;
esac
if [ -e "$(dirname "$0")/no-torch" ]; then echo "ModuleNotFoundError: No module named 'torch'"; exit 1; fi
if [ -n "$CUDA_VISIBLE_DEVICES" ] || [ -e "$(dirname "$0")/leak" ]; then
  case "$2" in *device_count*) echo "torch.cuda.device_count()=1 (torch 2.2.0+cu121)";; *) echo "__GPU__";; esac
else
  case "$2" in *device_count*) echo "torch.cuda.device_count()=0 (torch 2.2.0+cu121)";; *) echo "WARNING: No GPU";; esac
fi
"""


@pytest.fixture
def fake_gpu_machine(tmp_path):
    """One folder with nvidia-smi and the sandbox's python, first on the runner's and the sandbox's PATH
    (the local backend puts the sandbox's interpreter's folder first)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text(f"""#!/bin/bash
case "$*" in
  *index,name*) echo "0, {H100}, 81559, GPU-fake-0, 580.159.04";;
  *) echo "{H100}";;
esac
""")
    (bin_dir / "python").write_text(FAKE_PYTHON.replace("__GPU__", H100))
    for script in bin_dir.iterdir():
        script.chmod(0o755)
    return bin_dir, bin_dir / "python"


def check(tmp_path, bin_dir, python) -> tuple[int, dict]:
    # No pynvml: runner.host.hardware falls back to the fake nvidia-smi on PATH.
    done = subprocess.run(
        [sys.executable, "-S", str(SCRIPT), "--out", str(tmp_path / "out"), "--python", str(python)],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, json.loads((tmp_path / "out" / "gpu_check.json").read_text())


def test_a_gpu_machine_whose_sandbox_sees_exactly_its_gpu_passes(tmp_path, fake_gpu_machine):
    code, report = check(tmp_path, *fake_gpu_machine)
    assert code == 0, report
    assert report["detected"]["gpus"] == [
        {"index": 0, "name": H100, "memory_mb": 81559, "uuid": "GPU-fake-0", "driver": "580.159.04"}
    ]
    assert report["local"]["status"] == "passed" and "torch sees exactly " + H100 in report["local"]["why"]
    assert "HARDWARE=1 " + H100 in report["local"]["runs"]["given GPU 0"]["output"]  # start.sh's own line
    if report["docker"]["status"] == "skipped":  # no engine, no image, or no toolkit: said why
        assert report["docker"]["why"]


def test_a_sandbox_given_no_gpu_that_still_sees_one_fails(tmp_path, fake_gpu_machine):
    (fake_gpu_machine[0] / "leak").touch()  # this torch ignores CUDA_VISIBLE_DEVICES
    code, report = check(tmp_path, *fake_gpu_machine)
    assert code == 1 and report["local"]["status"] == "failed"
    assert "a sandbox given no GPU still sees one" in report["local"]["why"]


def test_a_python_without_torch_is_skipped_and_said(tmp_path, fake_gpu_machine):
    (fake_gpu_machine[0] / "no-torch").touch()
    code, report = check(tmp_path, *fake_gpu_machine)
    assert report["local"]["status"] == "skipped" and "no torch" in report["local"]["why"]

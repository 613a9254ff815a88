#!/usr/bin/env python3
"""The GPU check for a machine with NVIDIA GPUs: what a runner there detects, and what a sandbox sees.

    python3 scripts/gpu_check.py [--out DIR] [--image mlebench-env] [--python PATH]

Needs no Django and no database (so it runs on a bare GPU machine in well under a minute; about 10 s
here without a GPU): it imports only runner.host.hardware and runner.backends.gpus from this checkout.

1. Detection: runner.host.hardware.detect_gpus() (NVML, then nvidia-smi) gives each GPU's model, memory,
   UUID and driver, as a runner registers them and a run records them.
2. A local sandbox given GPU 0 (the local backend's CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER) runs
   MLE-bench's own start.sh GPU check (its aide and mlagentbench agents' lines, verbatim:
   nvidia-smi's names, then torch and TensorFlow): torch must see exactly one GPU, the model NVML
   named; a sandbox given none must see no GPU (MLE-bench prints `WARNING: No GPU`).
3. Docker, where an engine with the NVIDIA Container Toolkit and the image exist: a container with
   the Docker backend's device request and environment for GPU 0 runs the same check.

Each part says passed, failed or skipped with the reason, on stdout and in DIR/gpu_check.json; the
exit status is 1 if any part failed, 0 otherwise (a machine without GPUs passes by saying so).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner.backends import gpus as sandbox_gpus  # noqa: E402
from runner.host import hardware  # noqa: E402

# MLE-bench's agents/aide/start.sh (and mlagentbench's), lines 9-25 at openai/mle-bench 783b15a.
MLEBENCH_GPU_CHECK = r"""
# determine hardware available
if command -v nvidia-smi &> /dev/null && nvidia-smi --query-gpu=name --format=csv,noheader &> /dev/null; then
  HARDWARE=$(nvidia-smi --query-gpu=name --format=csv,noheader \
    | sed 's/^[ \t]*//' \
    | sed 's/[ \t]*$//' \
    | sort \
    | uniq -c \
    | sed 's/^ *\([0-9]*\) *\(.*\)$/\1 \2/' \
    | paste -sd ', ' -)
else
  HARDWARE="a CPU"
fi
export HARDWARE
echo "HARDWARE=$HARDWARE"
# check that we can use the GPU in PyTorch
python -c "import torch; print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'WARNING: No GPU')"
# check that we can use the GPU in TensorFlow
python -c "import tensorflow as tf; print('GPUs Available: ', tf.config.list_physical_devices('GPU'))"
"""
# What the sandbox's torch counts, beside MLE-bench's line (which names only device 0).
TORCH_COUNT = (
    "import torch; print('torch.cuda.device_count()=%d (torch %s)' % "
    "(torch.cuda.device_count() if torch.cuda.is_available() else 0, torch.__version__))"
)
TIMEOUT_S = 240
DOCKER_RUN = ("docker", "run", "--rm", "--network", "none")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or "."))
    parser.add_argument("--image", default="mlebench-env", help="the image the Docker part runs the check in")
    parser.add_argument("--python", default=sys.executable, help="the Python with torch the local part runs")
    args = parser.parse_args()
    report = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    found, source = hardware.detect_gpus()
    report["detected"] = {"source": source, "gpus": [gpu.to_json() for gpu in found]}
    print(f"detected: {len(found)} GPU(s) via {source or 'nothing'}: {[g.to_json() for g in found]}")
    report["local"] = check_local(found, args.python)
    report["docker"] = check_docker(found, args.image)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu_check.json").write_text(json.dumps(report, indent=2))
    failed = [part for part in ("local", "docker") if report[part]["status"] == "failed"]
    print(f"result: {'FAILED: ' + ', '.join(failed) if failed else 'passed'} (report in {args.out / 'gpu_check.json'})")
    return 1 if failed else 0


def check_local(found: list[hardware.Gpu], python: str) -> dict:
    """MLE-bench's check in a local sandbox's environment, given GPU 0, then given none."""
    bin_dir = Path(python).parent  # start.sh says `python`: the sandbox's own interpreter comes first
    path = f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"
    runs = {}
    for label, given in (("given GPU 0", (0,) if found else ()), ("given none", ())):
        env = {"PATH": path, "HOME": os.environ.get("HOME", "/tmp"), **sandbox_gpus.local_environment(given)}
        runs[label] = _run(["bash", "-c", MLEBENCH_GPU_CHECK + f'python -c "{TORCH_COUNT}"'], env)
    verdict = _verdict(found, runs["given GPU 0"]["output"], runs["given none"]["output"])
    print(f"local sandbox: {verdict['status']}: {verdict['why']}")
    return {**verdict, "runs": runs}


def check_docker(found: list[hardware.Gpu], image: str) -> dict:
    """The same check in a container made as the Docker backend makes one (device request + environment)."""
    if not found:
        return {"status": "skipped", "why": "no GPU on this machine"}
    if shutil.which("docker") is None:
        return _said({"status": "skipped", "why": "no docker client on this machine"})
    info = _run(["docker", "info", "--format", "{{json .Runtimes}}"], dict(os.environ))
    if info["code"] != 0:
        return _said({"status": "skipped", "why": f"no Docker engine answers: {info['output'][-200:]}"})
    if _run(["docker", "image", "inspect", image], dict(os.environ))["code"] != 0:
        return _said({"status": "skipped", "why": f"the image {image} is not on this machine"})
    # `--gpus '"device=0"'` is the command line's form of the backend's docker_request((0,))
    given_gpu = [
        "--read-only",
        "--tmpfs",
        "/tmp",
        "--gpus",
        '"device=0"',
        *_flags(sandbox_gpus.docker_environment((0,))),
    ]
    check = ["--entrypoint", "bash", image, "-lc", MLEBENCH_GPU_CHECK]
    given = _run([*DOCKER_RUN, *given_gpu, *check[:-1], check[-1] + f'python -c "{TORCH_COUNT}"'], dict(os.environ))
    if "could not select device driver" in given["output"]:
        return _said({"status": "skipped", "why": "the engine lacks the NVIDIA Container Toolkit: " + given["output"]})
    nothing = _run([*DOCKER_RUN, *_flags(sandbox_gpus.docker_environment(())), *check], dict(os.environ))
    verdict = _verdict(found, given["output"], nothing["output"])
    return _said({**verdict, "runs": {"given GPU 0": given, "given none": nothing}})


def _flags(env: dict[str, str]) -> list[str]:
    return [arg for name, value in env.items() for arg in ("-e", f"{name}={value}")]


def _verdict(found: list[hardware.Gpu], given: str, none: str) -> dict:
    if "No module named 'torch'" in given:
        return {"status": "skipped", "why": "no torch in the sandbox's Python (--python, or the image's)"}
    if not found:
        ok = "WARNING: No GPU" in given
        return {
            "status": "passed" if ok else "failed",
            "why": "no GPU on this machine: MLE-bench's check says 'WARNING: No GPU'"
            if ok
            else "no GPU detected, yet the sandbox's torch reports one",
        }
    problems = []
    if found[0].name not in given:
        problems.append(f"torch did not name GPU 0 ({found[0].name!r})")
    if "torch.cuda.device_count()=1 " not in given:
        problems.append("torch does not see exactly the one GPU given (a CPU build of torch sees none)")
    if "WARNING: No GPU" not in none:
        problems.append("a sandbox given no GPU still sees one")
    tensorflow = "GPUs Available:  [PhysicalDevice" in given
    why = "; ".join(problems) or f"torch sees exactly {found[0].name}; a sandbox given none sees no GPU"
    why += "; TensorFlow sees it too" if tensorflow else "; TensorFlow: " + _tensorflow_line(given)
    return {"status": "failed" if problems else "passed", "why": why}


def _tensorflow_line(output: str) -> str:
    lines = [line for line in output.splitlines() if "tensorflow" in line.lower() or "GPUs Available" in line]
    return (lines[-1] if lines else "no output")[:200]


def _said(verdict: dict) -> dict:
    print(f"docker sandbox: {verdict['status']}: {verdict['why']}")
    return verdict


def _run(command: list[str], env: dict[str, str]) -> dict:
    started = time.monotonic()
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        code, output = done.returncode, done.stdout + done.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        code, output = -1, f"{exc.__class__.__name__}: {exc}"
    return {"code": code, "seconds": round(time.monotonic() - started, 1), "output": output[-4000:]}


if __name__ == "__main__":
    sys.exit(main())

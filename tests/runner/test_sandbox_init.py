"""The in-sandbox launcher and checker of MLE-bench agents, run here as plain processes: the checker
answers like MLE-bench's grading server (format only, never a score), sandbox_init seeds /home,
starts its helpers before the agent, passes SIGTERM on and exits with the agent's code."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from runner.backends import TOOLS_DIR
from tests.runs.test_submission import IDS

SAMPLE = "PassengerId,Transported\n" + "".join(f"{i},False\n" for i in IDS)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def checker(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "sample_submission.csv").write_text(SAMPLE)
    port = free_port()
    server = subprocess.Popen([sys.executable, str(TOOLS_DIR / "validate_server.py"), "--port", str(port),
                               "--data", str(data)])
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while True:
        try:
            urllib.request.urlopen(url + "/health", timeout=1)
            break
        except OSError:
            assert time.monotonic() < deadline, "the checker did not start"
            time.sleep(0.05)
    yield url
    server.terminate()
    server.wait(5)


def post(url: str, content: bytes, field: str = "file") -> tuple[int, dict]:
    boundary = "medalboard-test-boundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"s.csv\"\r\n"
            f"Content-Type: text/csv\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(url + "/validate", data=body, method="POST",
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_the_checker_answers_like_mlebench_from_the_format_only(checker):
    assert json.load(urllib.request.urlopen(checker + "/health")) == {"status": "running"}
    assert post(checker, SAMPLE.encode()) == (200, {"result": "Submission is valid."})
    status, answer = post(checker, SAMPLE.replace(f"{IDS[0]},False", f"{IDS[0]},").encode())
    assert status == 200 and set(answer) == {"result"}
    assert answer["result"].startswith("Submission invalid!") and "empty or NaN" in answer["result"]
    status, answer = post(checker, b"PassengerId,Transported\n")
    assert answer["result"].startswith("Submission invalid!") and "rows" in answer["result"]
    assert post(checker, SAMPLE.encode(), field="other")[0] == 400


def test_sandbox_init_starts_the_checker_first_seeds_home_and_returns_the_agents_code(tmp_path):
    home, seed = tmp_path / "home", tmp_path / "seed"
    (home / "data").mkdir(parents=True)
    (home / "data" / "sample_submission.csv").write_text(SAMPLE)
    (home / "instructions.txt").write_text("ours")
    (seed / "agent").mkdir(parents=True)
    (seed / "agent" / "start.sh").write_text("echo from the image")
    (seed / "instructions.txt").write_text("the image's")
    (seed / "data").mkdir()
    (seed / "data" / "planted.csv").write_text("x")
    port = free_port()
    agent = (f"import json, urllib.request; print(json.load(urllib.request.urlopen("
             f"'http://127.0.0.1:{port}/health'))['status']); raise SystemExit(3)")
    done = subprocess.run(
        [sys.executable, str(TOOLS_DIR / "sandbox_init.py"), "--home", str(home), "--seed-home", str(seed),
         "--validate-port", str(port), "--workdir", str(tmp_path), "--", sys.executable, "-c", agent],
        capture_output=True, text=True, timeout=60, env={"DATA_DIR": str(home / "data"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == "running"  # the checker answered before the agent's first line
    assert (home / "agent" / "start.sh").read_text() == "echo from the image"
    assert (home / "instructions.txt").read_text() == "ours"  # what the runner wrote is kept
    assert not (home / "data" / "planted.csv").exists()  # the mounted folders are left alone
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1)  # the helpers stopped with the agent


def test_sigterm_reaches_the_agents_whole_group_and_also_helpers_run(tmp_path):
    marker = tmp_path / "helper-ran"
    helper = f"{sys.executable} -c \"open('{marker}', 'w').write('yes'); import time; time.sleep(60)\""
    init = subprocess.Popen(
        [sys.executable, str(TOOLS_DIR / "sandbox_init.py"), "--home", str(tmp_path), "--no-validate",
         "--also", helper, "--", "bash", "-c", "sleep 60 & wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not marker.exists():
        assert time.monotonic() < deadline, "the --also helper never ran"
        time.sleep(0.05)
    time.sleep(0.3)
    started = time.monotonic()
    init.send_signal(signal.SIGTERM)
    assert init.wait(10) == 128 + signal.SIGTERM
    assert time.monotonic() - started < 5  # the group got it: bash's `wait` and its sleep both ended


def test_sandbox_init_without_a_command_says_so():
    done = subprocess.run([sys.executable, str(TOOLS_DIR / "sandbox_init.py"), "--no-validate"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "give the agent's command after --" in done.stderr


def test_conda_shim_runs_activates_and_refuses_what_it_cannot_install(tmp_path):
    shim = Path(__file__).resolve().parents[2] / "runner" / "agents" / "conda_shim.py"
    env_bin = tmp_path / "envs" / "agent" / "bin"
    env_bin.mkdir(parents=True)
    (env_bin / "python").symlink_to(sys.executable)
    conda = tmp_path / "bin" / "conda"  # as the image has it: an executable on PATH
    conda.parent.mkdir()
    conda.write_bytes(shim.read_bytes())
    conda.chmod(0o755)
    script = """set -e
eval "$(conda shell.bash hook)"
conda activate agent
echo "active=$CONDA_DEFAULT_ENV python=$(command -v python)"
conda run -n agent --no-capture-output bash -c 'echo "run=$CONDA_PREFIX"'
conda clean -afy
conda install -y -n agent -c conda-forge numpy
conda install -y -n agent surely-not-a-package-xyz || echo "install refused"
conda deactivate
echo "after=$CONDA_DEFAULT_ENV"
conda frobnicate || echo "unknown refused"
"""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                          env={"MEDALBOARD_CONDA_ROOT": str(tmp_path), "PATH": f"{conda.parent}:/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"active=agent python={env_bin}/python" in lines and f"run={tmp_path}/envs/agent" in lines
    assert "All requested packages already installed" in done.stdout
    assert "install refused" in lines and "surely-not-a-package-xyz" in done.stderr
    assert "after=base" in lines and "unknown refused" in lines

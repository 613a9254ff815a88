"""The local backend runs a real agent script as a subprocess: layout, environment, limits, stop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from runner.backends import SandboxSpec, StartFailed, get_backend
from runner.backends.local import LocalBackend

AGENT = """
import json, os, sys
env = dict(os.environ)
with open(os.path.join(os.environ["SUBMISSION_DIR"], "submission.csv"), "w") as f:
    f.write("id,target\\n1,0.5\\n")
with open(os.path.join(os.environ["LOGS_DIR"], "agent.log"), "w") as f:
    f.write("trained\\n")
with open(os.path.join(os.environ["CODE_DIR"], "seen.json"), "w") as f:
    json.dump({"env": env, "cwd": os.getcwd(), "cores": len(os.sched_getaffinity(0)),
               "data": sorted(os.listdir(os.environ["DATA_DIR"])),
               "tools": sorted(os.listdir(os.environ["TOOLS_DIR"]))}, f)
print("hello on stdout", flush=True)
print("warning on stderr", file=sys.stderr, flush=True)
"""

# Ignores SIGTERM, and so does the child it forks: only SIGKILL to the whole group ends them.
STUBBORN = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = os.fork()
if child == 0:
    time.sleep(600)
    sys.exit(0)
with open(os.path.join(os.environ["LOGS_DIR"], "pids"), "w") as f:
    f.write(f"{os.getpid()} {child}")
with open(os.path.join(os.environ["SUBMISSION_DIR"], "submission.csv"), "w") as f:
    f.write("id,target\\n1,partial\\n")
print("working", flush=True)
time.sleep(600)
"""

HOG = """
import os
block = bytearray(int(os.environ["HOG_MB"]) * 1024 * 1024)
print("allocated", len(block), flush=True)
"""


@pytest.fixture
def folders(tmp_path):
    data, tools = tmp_path / "public", tmp_path / "tools"
    data.mkdir()
    tools.mkdir()
    (data / "train.csv").write_text("id,x,target\n1,2,0\n")
    (data / "description.md").write_text("# A competition\n")
    (tools / "baseline_agent.py").write_text("print('baseline')\n")
    return tmp_path


def make_spec(folders, script: str, **overrides) -> SandboxSpec:
    path = folders / f"agent-{uuid.uuid4().hex[:6]}.py"
    path.write_text(script)
    defaults = dict(
        name=f"medalboard-test-local-{uuid.uuid4().hex[:8]}", command=[sys.executable, str(path)],
        data_dir=folders / "public", workdir=folders / "work", tools_dir=folders / "tools", time_limit_s=60,
    )
    return SandboxSpec(**{**defaults, **overrides})


def wait(sandbox, timeout_s: float = 30) -> int:
    deadline = time.monotonic() + timeout_s
    while (code := sandbox.poll()) is None:
        assert time.monotonic() < deadline, "agent did not finish"
        time.sleep(0.05)
    return code


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting for its new parent counts as gone
        return stat.read().split(") ", 1)[1].startswith("Z")


def test_agent_sees_the_layout_and_a_clean_environment(folders, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "runner-secret-must-not-leak")
    backend = get_backend("local")
    spec = make_spec(folders, AGENT, env={"SEED": "3", "OPENAI_API_KEY": "sk-agent"}, gpus=(1, 3), cpus=1)
    sandbox = backend.start(spec)
    try:
        assert wait(sandbox) == 0
    finally:
        sandbox.remove()
    work = (folders / "work").resolve()
    assert (work / "submission" / "submission.csv").read_text() == "id,target\n1,0.5\n"
    assert (work / "logs" / "agent.log").read_text() == "trained\n"
    seen = json.loads((work / "code" / "seen.json").read_text())
    env = seen["env"]
    assert seen["cwd"] == str(work / "code")
    assert seen["data"] == ["description.md", "train.csv"]
    assert seen["tools"] == ["baseline_agent.py"]
    assert env["DATA_DIR"] == str((folders / "public").resolve())
    assert env["TOOLS_DIR"] == str((folders / "tools").resolve())
    assert (env["SUBMISSION_DIR"], env["LOGS_DIR"], env["CODE_DIR"]) == (
        str(work / "submission"), str(work / "logs"), str(work / "code"))
    assert env["HOME"] == str(work / "home")
    assert Path(env["TMPDIR"]).name.startswith("medalboard-tmp-") and not Path(env["TMPDIR"]).exists()  # removed
    assert env["TIME_LIMIT_SECONDS"] == "60"
    assert env["CUDA_VISIBLE_DEVICES"] == "1,3" and env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert (env["SEED"], env["OPENAI_API_KEY"]) == ("3", "sk-agent")
    assert "SECRET_KEY" not in env and "DATABASE_URL" not in env
    assert env["PATH"].split(":")[0] == os.path.dirname(sys.executable)
    assert seen["cores"] == 1
    tail = sandbox.output_tail()
    assert "hello on stdout" in tail and "warning on stderr" in tail
    assert tail == sandbox.spec.host_output_log.read_text()  # the runner's own folder, not the agent's logs/


# What PyTorch's DataLoader workers do to hand a tensor over (multiprocessing's resource sharer binds a Unix
# socket under TMPDIR), and any program binding a socket there: the path must fit in 107 bytes.
SOCKETS = """
import multiprocessing.reduction, os, socket, tempfile
with open(os.path.join(os.environ["LOGS_DIR"], "tmpdir"), "w") as f:
    f.write(os.environ["TMPDIR"] + " " + oct(os.stat(os.environ["TMPDIR"]).st_mode & 0o777))
read, write = os.pipe()
multiprocessing.reduction.DupFd(write)
server = socket.socket(socket.AF_UNIX)
server.bind(os.path.join(tempfile.mkdtemp(prefix="kernel-"), "a-socket-of-some-program-with-a-long-name.sock"))
print("sockets bound", flush=True)
"""


def test_a_sandbox_under_a_deep_workdir_can_bind_unix_sockets_in_its_tmpdir(folders):
    deep = folders / ("a-runner-work-folder-nested-deep-" * 4) / "research-baseline-3-d0946c41" / "run-0"
    assert len(str(deep / "tmp" / "pymp-abcdefgh" / "listener-abcdefgh")) > 107  # where TMPDIR used to be
    spec = make_spec(folders, SOCKETS, workdir=deep)
    sandbox = get_backend("local").start(spec)
    try:
        assert wait(sandbox) == 0, sandbox.output_tail()
        tmpdir, mode = (deep / "logs" / "tmpdir").read_text().split()
        assert Path(tmpdir).is_dir() and mode == "0o700"
    finally:
        sandbox.remove()
    assert "sockets bound" in sandbox.output_tail()
    assert not Path(tmpdir).exists()  # the sandbox's TMPDIR goes with it; its workdir stays


def test_no_gpus_means_an_empty_cuda_visible_devices(folders):
    sandbox = get_backend("local").start(make_spec(folders, AGENT))
    try:
        assert wait(sandbox) == 0
    finally:
        sandbox.remove()
    env = json.loads((folders / "work" / "code" / "seen.json").read_text())["env"]
    assert env["CUDA_VISIBLE_DEVICES"] == ""


def test_the_agent_cannot_override_its_folders_through_spec_env(folders):
    spec = make_spec(folders, AGENT, env={"DATA_DIR": "/", "TIME_LIMIT_SECONDS": "99999"})
    sandbox = get_backend("local").start(spec)
    try:
        assert wait(sandbox) == 0
    finally:
        sandbox.remove()
    env = json.loads((folders / "work" / "code" / "seen.json").read_text())["env"]
    assert env["DATA_DIR"] == str((folders / "public").resolve()) and env["TIME_LIMIT_SECONDS"] == "60"


def test_memory_limit_stops_a_hog_but_not_a_modest_agent(folders):
    backend = get_backend("local")
    modest = backend.start(make_spec(folders, HOG, env={"HOG_MB": "64"}, memory_bytes=400 << 20))
    hog = backend.start(make_spec(folders, HOG, env={"HOG_MB": "1024"}, memory_bytes=400 << 20,
                                  workdir=folders / "work-hog"))
    try:
        assert wait(modest) == 0
        assert wait(hog) != 0
    finally:
        modest.remove()
        hog.remove()
    assert "allocated 67108864" in modest.output_tail()
    assert "MemoryError" in hog.output_tail()


def test_stop_kills_a_process_group_that_ignores_sigterm_within_grace(folders):
    spec = make_spec(folders, STUBBORN)
    sandbox = get_backend("local").start(spec)
    pids_file = spec.host_logs_dir / "pids"
    deadline = time.monotonic() + 20
    while not pids_file.exists() or not pids_file.read_text():
        assert time.monotonic() < deadline and sandbox.poll() is None, sandbox.output_tail()
        time.sleep(0.05)
    parent, child = (int(p) for p in pids_file.read_text().split())
    started = time.monotonic()
    code = sandbox.stop(grace_s=1.0)
    took = time.monotonic() - started
    sandbox.remove()
    assert code == 137  # SIGKILL, reported as a shell would
    assert 1.0 <= took < 5.0  # the grace, then SIGKILL (generous: CI machines are busy)
    assert gone(parent) and gone(child)
    assert (spec.host_submission_dir / "submission.csv").read_text() == "id,target\n1,partial\n"  # files kept
    assert "working" in sandbox.output_tail()


def test_stop_of_a_cooperative_agent_is_quick_and_reports_sigterm(folders):
    sandbox = get_backend("local").start(make_spec(folders, "import time\nprint('up', flush=True)\ntime.sleep(600)\n"))
    time.sleep(0.3)
    started = time.monotonic()
    assert sandbox.stop(grace_s=10) == 143
    assert time.monotonic() - started < 4
    sandbox.remove()
    sandbox.remove()  # idempotent


def test_a_missing_executable_is_a_clear_start_failure(folders):
    spec = make_spec(folders, AGENT, command=[str(folders / "no-such-agent")])
    with pytest.raises(StartFailed, match="no-such-agent"):
        get_backend("local").start(spec)


# A runner that starts a sandbox and dies (os._exit: no clean-up), leaving its agent orphaned.
DYING_RUNNER = """
import os, sys
from pathlib import Path
from runner.backends.base import SandboxSpec
from runner.backends.local import LocalBackend
folders, name, runner, site = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
spec = SandboxSpec(name=name, command=[sys.executable, "-c", "import time; time.sleep(600)"],
                   data_dir=folders / "public", workdir=folders / name, tools_dir=folders / "tools")
print(LocalBackend(runner_name=runner, site=site).start(spec).id, flush=True)
os._exit(0)
"""


def test_remove_stale_kills_what_a_dead_runner_of_its_own_left_and_nothing_else(folders):
    prefix = f"medalboard-stale-{uuid.uuid4().hex[:6]}-"
    runner, site = f"local-{uuid.uuid4().hex[:8]}", "0123456789abcdef"
    dead = subprocess.run([sys.executable, "-c", DYING_RUNNER, str(folders), prefix + "orphan", runner, site],
                          check=True, capture_output=True, text=True, cwd=settings.BASE_DIR)
    orphan = int(dead.stdout)
    live = LocalBackend(runner_name=runner, site=site).start(
        make_spec(folders, "import time\ntime.sleep(600)\n", name=prefix + "live"))
    # What a Docker sandbox's processes look like from the host: the sandbox's name, no owner (and,
    # under runc, another pid namespace); here in this namespace, so that only the missing owner saves it.
    unowned = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True,
                               env={"MEDALBOARD_SANDBOX": prefix + "docker", "PATH": os.environ["PATH"]})
    try:
        assert not gone(orphan) and live.poll() is None
        assert LocalBackend(runner_name=f"other-{runner}", site=site).remove_stale(prefix=prefix) == 0
        assert LocalBackend(runner_name=runner, site="fedcba9876543210").remove_stale(prefix=prefix) == 0
        restarted = LocalBackend(runner_name=runner, site=site)
        assert restarted.remove_stale(prefix=f"medalboard-other-{uuid.uuid4().hex[:6]}-") == 0
        assert not gone(orphan)  # another runner's, another site's, another prefix's clean-up left it
        assert restarted.remove_stale(prefix=prefix) == 1
        deadline = time.monotonic() + 5
        while not gone(orphan):
            assert time.monotonic() < deadline, "the orphaned agent survived"
            time.sleep(0.05)
        assert live.poll() is None  # its runner (this test) is alive: not stale
        assert unowned.poll() is None  # no owner: never a local runner's to kill
    finally:
        live.remove()
        unowned.kill()
        unowned.wait()


def test_a_runners_sandboxes_carry_its_name_and_site(folders):
    backend = LocalBackend(runner_name="box-7", site="0123456789abcdef")
    env = backend.environment(make_spec(folders, "pass\n"))
    assert env["MEDALBOARD_OWNER"] == "0123456789abcdef/box-7"
    assert env["MEDALBOARD_RUNNER"].startswith(f"{os.getpid()}:")
    assert get_backend("local", runner_name="box-8").runner_name == "box-8"

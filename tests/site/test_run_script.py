"""`make run` (scripts/run.sh) stops everything it started: a SIGTERM to the script (what `make`
passes on) or a Ctrl-C in its terminal (SIGINT to the whole foreground group) leaves no runner,
Celery worker, pool process or web server behind, within the stop grace and a few seconds. A job
submitted on its site is run by its loopback runner, through the runner API, to a graded run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from tests.redis_support import free_port

GRACE_S = 5
# The site and a runner started at once, from scratch: alone, after the parallel workers (`make test`)
pytestmark = pytest.mark.alone  # make run and its runners, stopped within seconds: timed


def marked(mark: str) -> list[int]:
    """The processes whose environment carries `mark`: whatever the script started, in any group."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"MEDALBOARD_RUN_TEST_MARK={mark}".encode() in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def wait_for(check, timeout: float, what: str, log: Path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.5)
    pytest.fail(f"{what} within {timeout:.0f} s; worker log:\n{log.read_text() if log.exists() else '(none)'}")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10):
            return True
    except urllib.error.HTTPError:
        return True  # it answered
    except OSError:
        return False


@pytest.fixture
def started(tmp_path):
    """scripts/run.sh without the content imports, on a var folder and a port of its own."""
    mark, port = uuid.uuid4().hex, free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "MEDALBOARD_TEST_"))}
    env.update({
        "MEDALBOARD_RUN_TEST_MARK": mark, "MEDALBOARD_VAR_DIR": str(tmp_path / "var"), "PORT": str(port),
        "MEDALBOARD_RUN_SKIP_CONTENT": "1", "MEDALBOARD_PYTHON": sys.executable, "RUN_STOP_GRACE_S": str(GRACE_S),
        "MEDALBOARD_RUNNER_NAME": f"run-script-test-{mark[:8]}", "DEBUG": "true",
        # The embedded defaults `make run` uses, whatever services the suite was pointed at.
        "DATABASE_URL": "", "CELERY_BROKER_URL": "", "SECRET_KEY": "",
    })
    # As from a terminal: SIGINT at its default. A suite started in the background of a non-interactive shell
    # inherits SIGINT ignored, and bash cannot trap a signal ignored on entry (Ctrl-C would then do nothing).
    script = subprocess.Popen(["bash", "scripts/run.sh"], cwd=settings.BASE_DIR, env=env, start_new_session=True,
                              stdout=open(tmp_path / "run.log", "wb"), stderr=subprocess.STDOUT,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    worker_log, loopback_log = tmp_path / "var" / "worker.log", tmp_path / "var" / "loopback-runner.log"
    try:
        wait_for(lambda: answers(f"http://127.0.0.1:{port}/"), 240, "the site did not answer", tmp_path / "run.log")
        wait_for(lambda: worker_log.exists() and " ready." in worker_log.read_text(), 240,
                 "the runner's Celery worker was not ready", worker_log)
        wait_for(lambda: loopback_log.exists() and "; claiming tasks" in loopback_log.read_text(), 240,
                 "the loopback runner did not register", loopback_log)
        yield script, mark, env
    finally:
        for pid in marked(mark):  # never leave this test's processes to the next one
            os.kill(pid, signal.SIGKILL)
        script.wait(timeout=30)


@pytest.mark.parametrize("how", ["SIGTERM to the script", "Ctrl-C in its terminal"])
def test_stopping_make_run_leaves_no_process(started, how):
    script, mark, _ = started
    alive = marked(mark)
    # the script, the loopback runner, the Celery runner, its worker (and pool), runserver (and its child)
    assert len(alive) >= 5, alive
    stopped_at = time.monotonic()
    if how == "SIGTERM to the script":
        script.send_signal(signal.SIGTERM)
    else:
        os.killpg(script.pid, signal.SIGINT)  # the terminal sends it to the foreground process group
    script.wait(timeout=GRACE_S + 90)  # the stop waits GRACE_S per group; on a loaded machine Python starts slowly
    deadline = time.monotonic() + 5
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.2)
    took = time.monotonic() - stopped_at
    assert marked(mark) == [], f"left running {took:.1f} s after the stop"
    assert script.returncode in (130, 143), script.returncode
    assert took < GRACE_S + 90
    print(f"{how}: everything stopped {took:.1f} s after the signal")


def manage(env: dict, *args: str, timeout: float = 240) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=env, timeout=timeout,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"manage.py {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def test_a_job_on_make_run_is_run_by_the_loopback_runner(started, tmp_path):
    """A job submitted on the site `make run` serves is claimed by its loopback runner through the runner
    API (a RemoteAttempt, its runner the loopback one: not the Celery runner beside it), and the run is
    graded by the site; the loopback runner's token is in a 0600 file and in no log."""
    _, mark, env = started
    var = Path(env["MEDALBOARD_VAR_DIR"])
    manage(env, "make_smoke_competitions", "--root", str(var / "smoke"))
    manage(env, "createsuperuser", "--noinput", "--username", "run-script", "--email", "run@example.com")
    lines = manage(env, "submit_job", "--agent", "baseline", "--competition", "smoke-wine", "--seeds", "1",
                   "--time-limit-minutes", "0.5", "--wait", "--poll-seconds", "1", timeout=300)
    (result,) = [json.loads(line) for line in lines.splitlines() if line.startswith("{")]
    assert result["run_status"] == "graded" and result["score"] is not None, result
    ran_by = json.loads(manage(env, "shell", "-c", (
        "import json; from runner.models import JobTask, RemoteAttempt; "
        f"task = JobTask.objects.select_related('runner').get(run_id={result['run']}); "
        "print(json.dumps([task.runner.name, RemoteAttempt.objects.filter(task=task).count()]))")).splitlines()[-1])
    assert ran_by == [env["MEDALBOARD_RUNNER_NAME"], 1], ran_by
    token_file = var / "loopback-runner.token"
    assert token_file.stat().st_mode & 0o777 == 0o600
    token = token_file.read_text().strip()
    assert token.startswith("mbr_")
    for log in (tmp_path / "run.log", var / "loopback-runner.log", var / "worker.log"):
        assert token not in log.read_text(), log
    for pid in marked(mark):  # on no command line (readable by every user), whose environment it is in
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue  # it ended meanwhile
        assert token.encode() not in cmdline, cmdline

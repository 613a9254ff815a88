"""Helpers shared by the job tests: public data for a competition, the scripted test agent, real
worker processes on the test database (the fixtures `fast_jobs` and `job_world` are in conftest)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from runner.backends import TOOLS_DIR
from runner.jobs.services import create_job
from tests.runs.test_submission import IDS

SCRIPTED_AGENT = Path(__file__).resolve().parent / "job_agents" / "scripted_agent.py"
COMPETITION = "spaceship-titanic"


def _has_public_data_field() -> bool:
    from leaderboard.models import Competition

    return "public_data_dir" in {f.name for f in Competition._meta.get_fields()}


# Worker processes and containers need the real field and the agent tools folder (not a patch).
needs_agent_tools = pytest.mark.skipif(
    not (_has_public_data_field() and (TOOLS_DIR / "baseline_agent.py").is_file()),
    reason="needs Competition.public_data_dir and runner/agent_tools",
)


def public_data(root: Path) -> Path:
    """A prepared public folder for spaceship-titanic: sample submission only (no answers in it)."""
    folder = root / "public"
    folder.mkdir(parents=True)
    (folder / "sample_submission.csv").write_text("PassengerId,Transported\n" + "".join(f"{i},False\n" for i in IDS))
    (folder / "description.md").write_text("# Spaceship Titanic\nPredict Transported.\n")
    return folder


def scripted_job(user, minutes: float = 1.0, seeds: int = 1, **agent_settings):
    return create_job(user=user, agent="scripted", competitions=[COMPETITION], seeds=seeds,
                      time_limit_minutes=minutes, settings=agent_settings)


# --- real worker processes ----------------------------------------------------------------------

FAST_ENV = {
    "MEDALBOARD_JOB_POLL_S": "0.2", "MEDALBOARD_JOB_LEASE_S": "4", "MEDALBOARD_JOB_STOP_GRACE_S": "1",
    "MEDALBOARD_RUNNER_HEARTBEAT_S": "1", "MEDALBOARD_SWEEP_INTERVAL_S": "1", "MEDALBOARD_STALE_PENDING_S": "2",
    "MEDALBOARD_GRADING_LEASE_S": "4",
}


def database_url() -> str:
    """The test database as a URL, for worker processes (SQLite file or PostgreSQL test database)."""
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


class WorkerProcess:
    """`celery -A webapp worker` in its own process group, on the test database and broker."""

    def __init__(self, log_path: Path, queues: str, runner: str = "", extra_env: dict | None = None,
                 pool: str = "solo") -> None:
        import os
        import subprocess

        from django.conf import settings

        env = {**os.environ, **FAST_ENV, "DJANGO_SETTINGS_MODULE": "webapp.test_settings",
               "DATABASE_URL": database_url(), "MEDALBOARD_RUNNER_WORK_DIR": str(settings.RUNNER_WORK_DIR),
               "MEDALBOARD_RUNNER_NAME": runner, "MEDALBOARD_RUNNER_BACKEND": "local", **(extra_env or {})}
        self.log_path = log_path
        self.log = open(log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [str(Path(sys.executable).parent / "celery"), "-A", "webapp", "worker", "-Q", queues, "--pool", pool,
             "--concurrency", "1", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
             "-n", f"test-{os.getpid()}-{id(self)}@%h"],
            cwd=settings.BASE_DIR, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def kill9(self) -> None:
        import os
        import signal

        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        import os
        import signal
        import subprocess

        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]


def wait_until(check, timeout: float, what: str, worker: WorkerProcess | None = None):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    log = f"\n--- worker log ---\n{worker.output()}" if worker else ""
    raise AssertionError(f"not {what} after {timeout} s{log}")


# --- slow work, for killing a worker in the middle of it ------------------------------------------


def slow_work_env(log_path: Path, seconds: float, **settings_env: str) -> dict[str, str]:
    """Worker environment in which grading and importing take `seconds` longer and are noted in
    `log_path` (tests/slow_work.py), plus MEDALBOARD_<name> variables from `settings_env`."""
    return {"MEDALBOARD_TEST_WORKER_IMPORTS": "tests.slow_work", "MEDALBOARD_TEST_SLOW_WORK_S": str(seconds),
            "MEDALBOARD_TEST_WORK_LOG": str(log_path),
            **{f"MEDALBOARD_{name}": value for name, value in settings_env.items()}}


def work_log(log_path: Path) -> list[tuple[str, str, int, float]]:
    """(event, what, pid, time) for each start and end of slowed work, in order."""
    if not log_path.exists():
        return []
    return [(event, what, int(pid), float(at))
            for event, what, pid, at in (line.split() for line in log_path.read_text().splitlines())]


def kill_the_holder(workers: list[WorkerProcess], log_path: Path, lease_s: float, what: str,
                    still_working) -> tuple[WorkerProcess, WorkerProcess, float]:
    """Wait until one of two workers starts the slowed work, let it run past a lease length (the
    other sweeping all along), check `still_working()` (its lease renewed, so nobody took it), then
    kill -9 it: (the holder, the survivor, when it was killed)."""
    import time

    started = wait_until(lambda: [entry for entry in work_log(log_path) if entry[0] == "start"], 90, what)
    holder = next(w for w in workers if w.process.pid == started[0][2])
    survivor = next(w for w in workers if w is not holder)
    time.sleep(1.5 * lease_s)
    still_working()
    holder.kill9()
    return holder, survivor, time.time()


def done_once_by_the_survivor(log_path: Path, holder: WorkerProcess, survivor: WorkerProcess, killed: float,
                              within: float) -> float:
    """Assert the work was started by the holder, then by the survivor, which alone finished it,
    `within` seconds of the kill; returns the seconds from the kill to the second start."""
    done = work_log(log_path)
    assert [(event, pid) for event, _, pid, _ in done] == [
        ("start", holder.process.pid), ("start", survivor.process.pid), ("done", survivor.process.pid)]
    noticed = done[1][3] - killed
    assert noticed < within, f"noticed {noticed:.1f} s after the kill"
    return noticed

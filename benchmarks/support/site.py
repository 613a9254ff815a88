"""A throwaway Medalboard site for benchmarks: its own database (a SQLite file, or a PostgreSQL
database this module creates and drops), its own var folder, production settings (DEBUG off), the
catalogue imported, and gunicorn when asked. Never the user's database or var/.

Call `configure()` before `django.setup()`: settings are read from the environment once.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def configure(database: str | None, *, prefix: str) -> tuple[Path, str]:
    """Point the environment at a fresh var folder and database; returns (var folder, DATABASE_URL)."""
    var = Path(tempfile.mkdtemp(prefix=f"medalboard-bench-{prefix}-"))
    url = database or f"sqlite:///{var / 'bench.sqlite3'}"
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "webapp.settings", "DEBUG": "false",
        "SECRET_KEY": "benchmark-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        "SECURE_SSL_REDIRECT": "false", "ALLOWED_HOSTS": "testserver,127.0.0.1,localhost",
        "MEDALBOARD_VAR_DIR": str(var), "STATIC_ROOT": str(var / "static"), "MEDIA_ROOT": str(var / "artifacts"),
        "DATABASE_URL": url, "LOG_LEVEL": "WARNING",
        # Many clients from one address: the throttles and quotas would answer 429 to the benchmark.
        "MEDALBOARD_API_RATE_ANON": "100000000/min", "MEDALBOARD_API_RATE_USER": "100000000/min",
        "MEDALBOARD_API_RATE_UPLOADS": "100000000/min", "MEDALBOARD_DAILY_GRADING_QUOTA": "100000000",
    })
    os.environ.pop("CELERY_TASK_ALWAYS_EAGER", None)
    sys.path.insert(0, str(ROOT))
    if url.startswith("postgres"):
        _recreate_postgres(url)
    return var, url


def _maintenance(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    if not name or name in ("postgres", "template0", "template1"):
        raise SystemExit(f"refusing to use database {name!r}: name a throwaway one, e.g. .../medalboard_scale")
    return urlunsplit(parts._replace(path="/postgres")), name


def _recreate_postgres(url: str) -> None:
    import psycopg2

    admin, name = _maintenance(url)
    with contextlib.closing(psycopg2.connect(admin)) as conn:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            cur.execute(f'CREATE DATABASE "{name}"')


def cleanup(var: Path, url: str, *, keep: bool) -> None:
    """Drop the throwaway database and var folder (unless --keep)."""
    if keep:
        print(f"kept: {url} and {var}")
        return
    if url.startswith("postgres"):
        from django.db import connections

        connections.close_all()
        import psycopg2

        admin, name = _maintenance(url)
        with contextlib.closing(psycopg2.connect(admin)) as conn:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    shutil.rmtree(var, ignore_errors=True)


def build_site() -> None:
    """Tables, static files (the manifest DEBUG-off pages need) and the MLE-bench catalogue."""
    from django.core.management import call_command

    quiet = open(os.devnull, "w")
    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    call_command("import_competitions", stdout=quiet, stderr=quiet)


def aggregates_command() -> str | None:
    """The command that rebuilds the leaderboard aggregates from scratch, where the site has one."""
    from django.core.management import get_commands

    names = [name for name, app in get_commands().items() if app == "leaderboard" and "aggregate" in name]
    return sorted(names)[0] if names else None


def rebuild_aggregates() -> float | None:
    """Rebuild them after a bulk load (bulk_create skips whatever keeps them up to date); seconds, or None."""
    name = aggregates_command()
    if name is None:
        return None
    from django.core.management import call_command

    began = time.perf_counter()
    call_command(name, stdout=open(os.devnull, "w"))
    return time.perf_counter() - began


def leaderboard_changed() -> bool:
    """Raise the leaderboard's version, as any change to it does, so its next request is computed
    (a cache miss); False where the site has no leaderboard cache."""
    try:
        from leaderboard.analysis import page_cache
    except ImportError:
        return False
    page_cache.bump()
    return True


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and its children, from /proc (Linux).
    On a machine others share, server CPU per request is steadier than requests per second."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(entry.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


@dataclass
class Server:
    base: str
    pid: int

    def cpu(self) -> float:
        return cpu_seconds(self.pid)


@contextlib.contextmanager
def gunicorn(*, workers: int = 2, log: Path):
    """gunicorn serving this site (DEBUG off, gunicorn.conf.py read from the project folder); yields a
    Server (its base URL, and the CPU its master and workers have used)."""
    port = free_port()
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [str(BIN / "gunicorn"), "webapp.wsgi", "-w", str(workers), "-b", f"127.0.0.1:{port}",
             "--timeout", "120"],
            cwd=ROOT, env=os.environ.copy(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base + "/api/competitions/?limit=1", process)
        yield Server(base, process.pid)
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """Stop a server or worker started in its own session, and everything it started."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def wait_until_up(url: str, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")

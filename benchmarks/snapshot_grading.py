"""Grade a run's snapshots through a real broker and worker: the embedded one against Redis (a benchmark,
not a test).

    DEBUG=true .venv/bin/python benchmarks/snapshot_grading.py [--snapshots 300] [--redis redis://127.0.0.1:6379/1]
        [--old-interval]

Each measurement runs in a child process of its own with a throwaway var folder (SQLite, the smoke
competitions): it starts a Celery worker as `make run` does (`manage.py runner --backend local
--concurrency 2`), submits one run whose folder holds N snapshots (N + 1 grading tasks, enqueued as
any upload enqueues them), and times submit -> every snapshot graded. Printed: seconds and snapshots
per second for the embedded filesystem broker at the site's default polling interval and for Redis
measured in the same run, and their ratio; with --old-interval, also the embedded broker at kombu's
default polling interval (1 s), the setting before it was made shorter.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshots", type=int, default=300)
    parser.add_argument("--redis", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/1"))
    parser.add_argument("--old-interval", action="store_true", help="also measure kombu's 1 s default")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.snapshots)))
        return
    if not redis_answers(args.redis):
        raise SystemExit(f"no Redis answers at {args.redis}: the ratio needs one (--redis URL)")
    cases = [("embedded (default polling)", "filesystem://", None), ("Redis", args.redis, None)]
    if args.old_interval:
        cases.append(("embedded, 1 s polling (before)", "filesystem://", "1.0"))
    results = {name: child(url, interval, args.snapshots) for name, url, interval in cases}
    for name, seconds in results.items():
        print(f"{name:32s} {seconds:8.1f} s  {args.snapshots / seconds:7.1f} snapshots/s")
    embedded, redis = results["embedded (default polling)"], results["Redis"]
    print(f"embedded / Redis: {embedded / redis:.2f}x")
    if args.old_interval:
        print(f"1 s polling / default polling: {results['embedded, 1 s polling (before)'] / embedded:.1f}x")


def redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def child(broker: str, interval: str | None, snapshots: int) -> float:
    env = {**os.environ, "CELERY_BROKER_URL": "" if broker.startswith("filesystem") else broker}
    env.pop("CELERY_BROKER_POLLING_INTERVAL", None)
    if interval:
        env["CELERY_BROKER_POLLING_INTERVAL"] = interval
    out = subprocess.run([sys.executable, __file__, "--child", broker, "--snapshots", str(snapshots)],
                         env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"measurement on {broker} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def measure(broker: str, n: int) -> dict:
    from benchmarks.support import site

    var, url = site.configure(None, prefix="snapshots")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("make_smoke_competitions", root=str(var / "smoke"), stdout=open(os.devnull, "w"))
    if not broker.startswith("filesystem"):
        _purge()
    worker = _start_worker(var)
    try:
        seconds = _grade(var, n)
    finally:
        site.stop(worker)
        site.cleanup(var, url, keep=False)
    return {"seconds": seconds}


def _purge() -> None:
    from webapp.celery import app

    app.control.purge()


def _start_worker(var: Path) -> subprocess.Popen:
    from runner.models import Runner

    log = open(var / "worker.log", "wb")
    worker = subprocess.Popen([sys.executable, "manage.py", "runner", "--backend", "local", "--name", "bench",
                               "--concurrency", "2", "--loglevel", "WARNING"],
                              cwd=ROOT, env=os.environ.copy(), stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    _wait(lambda: Runner.objects.filter(name="bench", last_heartbeat__isnull=False).exists(), 60)
    time.sleep(2)  # connected to the broker before the first task
    return worker


def _grade(var: Path, n: int) -> float:
    from django.db import transaction

    from leaderboard.models import Competition, Snapshot
    from leaderboard.runs.experiments import ExperimentSpec
    from leaderboard.runs.submission import submit_run

    sample = Path(Competition.objects.get(slug="smoke-wine").public_data_dir) / "sample_submission.csv"
    folder = var / "run" / "smoke-wine_00000000-0000-4000-8000-000000000000"
    for name in ["submission/submission.csv", *(f"snapshots/{t}.csv" for t in range(1, n + 1))]:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(sample.read_bytes())
    (folder / "logs").mkdir()
    (folder / "logs" / "run.log").write_text("benchmark\n")
    began = time.perf_counter()
    with transaction.atomic():
        run = submit_run(owner=None, competition="smoke-wine", experiment=ExperimentSpec("bench", "none"),
                         run_folder=folder)
    left = Snapshot.objects.filter(run=run, status__in=(Snapshot.Status.PENDING, Snapshot.Status.GRADING))
    _wait(lambda: not left.exists(), 1800)
    return time.perf_counter() - began


def _wait(check, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise SystemExit(f"not done after {timeout} s")


if __name__ == "__main__":
    main()

"""A job's overhead through the runner API against the site's own code doing the same in its process, with
no HTTP (what the in-process runner, now gone, did: the baseline of the API's cost; a benchmark, not a
test).

    .venv/bin/python benchmarks/runner_api.py [--tasks 10] [--steps 10000] [--upload-mb 100] [--runners 20]

Everything runs in a throwaway var folder: a SQLite database, the smoke competitions, and the site
served by `manage.py runserver` (threaded) on the loopback. Each pair is measured in the same run:

1. dispatch: claiming a queued task and creating its run, in-process (runner.jobs.task_leases.claim and
   runner.jobs.attempts.prepare_run, what the site does at a claim) against
   SiteClient.claim (the same, plus the data manifest and the answer over HTTP);
2. streaming N steps, 100 lines a batch (a poll's worth): LiveSteps.append in-process against
   SiteClient.steps;
3. storing an M MB output file: job_runs.store_file in-process against SiteClient.upload (4 MiB
   chunks, the sha256 checked on the site) followed by the finish that stores it as an artifact;
4. R runners claiming from one site at once (threads, one token each) until the queue is empty:
   every task must be claimed exactly once.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VAR = Path(tempfile.mkdtemp(prefix="medalboard-bench-runner-api-"))
ENV = {
    "DEBUG": "true",
    "DJANGO_SETTINGS_MODULE": "webapp.settings",
    "MEDALBOARD_VAR_DIR": str(VAR),
    "MEDIA_ROOT": str(VAR / "artifacts"),
    "MEDALBOARD_RUNNER_UPLOAD_DIR": str(VAR / "uploads"),
    "MEDALBOARD_API_RATE_USER": "1000000/min",
    "MEDALBOARD_MAX_SEEDS": "1000",
}
os.environ.update(ENV)
os.environ.pop("DATABASE_URL", None)
sys.path.insert(0, str(ROOT))

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.files import File  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402

from leaderboard.runs import job_runs  # noqa: E402
from runner.api_v1 import tokens  # noqa: E402
from runner.client import SiteClient  # noqa: E402
from runner.jobs import attempts, task_leases  # noqa: E402
from runner.jobs.services import create_job  # noqa: E402
from runner.models import JobTask, Runner  # noqa: E402

BATCH = 100


def serve() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(VAR / "site.log", "wb")  # noqa: SIM115 - the benchmark's lifetime
    site = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env={**os.environ, **ENV},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return site, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.3)
    raise SystemExit("the site did not start; see " + str(VAR / "site.log"))


def jobs(user, tasks: int) -> list[JobTask]:
    # created outside any transaction test: published to the (idle) filesystem broker, never consumed
    job = create_job(user=user, agent="baseline", competitions=["smoke-wine"], seeds=tasks, time_limit_minutes=1)
    return list(job.tasks.order_by("pk"))


def client_for(name: str, url: str) -> SiteClient:
    _, token = tokens.issue(name)
    client = SiteClient(url, token, lost_site_s=60)
    # as many slots as the site allows: each runner here holds every task it claims, none finished
    client.register({"cpu_count": 64, "memory_gb": 256, "images": ["*"], "backend": "local", "slots": 64})
    return client


def timed(action) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def lines(n: int) -> list[tuple[int, bytes]]:
    return [
        (i, b'{"kind": "code", "title": "try %d", "data": {"content": "x = %d\\n"}}' % (i, i)) for i in range(1, n + 1)
    ]


def bench_dispatch(user, url: str, tasks: int) -> tuple[list[float], list[float], list[dict]]:
    local = Runner.objects.create(name="bench-in-process", cpu_count=64, memory_gb=256, images=["*"])
    in_process = []
    for task in jobs(user, tasks):

        def claim(task=task):
            held = task_leases.claim(task.pk, local)
            attempts.prepare_run(
                held,
                JobTask.objects.select_related("job__agent", "job__experiment", "job__created_by", "competition").get(
                    pk=task.pk
                ),
            )

        in_process.append(timed(claim))
    client, claims = client_for("bench-api", url), []
    jobs(user, tasks)
    api = [timed(lambda: claims.append(client.claim(wait_s=0))) for _ in range(tasks)]
    return in_process, api, [c | {"client": client} for c in claims]


def bench_steps(claim: dict, steps: int) -> tuple[float, float]:
    numbered = lines(steps)
    run = JobTask.objects.get(pk=claim["task"]).run
    other = JobTask.objects.exclude(pk=claim["task"]).filter(run__isnull=False).first()
    live = job_runs.LiveSteps(other.run)
    in_process = timed(lambda: [live.append(numbered[i : i + BATCH], lambda: None) for i in range(0, steps, BATCH)])
    live.close()
    client = claim["client"]
    api = timed(lambda: [client.steps(claim, numbered[i : i + BATCH]) for i in range(0, steps, BATCH)])
    assert (
        JobTask.objects.get(pk=claim["task"]).run.n_steps == steps == run.__class__.objects.get(pk=other.run_id).n_steps
    )
    return in_process, api


def bench_upload(claim: dict, megabytes: int) -> tuple[float, float]:
    path = VAR / "big.bin"
    with open(path, "wb") as f:
        for _ in range(megabytes):
            f.write(os.urandom(1 << 20))
    run = JobTask.objects.exclude(pk=claim["task"]).filter(run__isnull=False).first().run

    def store() -> None:
        with transaction.atomic(), open(path, "rb") as f:
            job_runs.store_file(run, "log", "logs/big.bin", File(f, name="big.bin"))

    in_process = timed(store)
    client = claim["client"]

    def upload() -> None:
        client.upload(claim, "out-00000", path, name="logs/big.bin", kind="log")
        client.finish(claim, {"status": "failed", "error": "benchmark", "counted": False, "files": ["out-00000"]})

    api = timed(upload)
    return in_process, api


def bench_concurrent(user, url: str, runners: int) -> tuple[float, dict[int, int]]:
    queued = jobs(user, runners * 2)
    clients = [client_for(f"bench-many-{i}", url) for i in range(runners)]
    got: dict[int, int] = {}
    lock = threading.Lock()

    def drain(client: SiteClient) -> None:
        while (claim := client.claim(wait_s=0)) is not None:
            with lock:
                got[claim["task"]] = got.get(claim["task"], 0) + 1

    threads = [threading.Thread(target=drain, args=(c,)) for c in clients]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    assert set(got) >= {t.pk for t in queued}, "a task was never claimed"
    return elapsed, got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--upload-mb", type=int, default=100)
    parser.add_argument("--runners", type=int, default=20)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    call_command("make_smoke_competitions", root=str(VAR / "smoke"), stdout=open(os.devnull, "w"))  # noqa: SIM115
    user = get_user_model().objects.create_user("bench", "bench@example.org", "bench", is_staff=True)
    site, url = serve()
    try:
        local_claims, api_claims, claims = bench_dispatch(user, url, args.tasks)
        steps_local, steps_api = bench_steps(claims[0], args.steps)
        upload_local, upload_api = bench_upload(claims[1], args.upload_mb)
        elapsed, got = bench_concurrent(user, url, args.runners)
    finally:
        os.killpg(site.pid, 15)
    dispatch_local, dispatch_api = statistics.median(local_claims) * 1000, statistics.median(api_claims) * 1000
    print(f"SQLite, runserver on the loopback, load average {os.getloadavg()[0]:.1f}")
    print("| what | in-process (no HTTP) | through the API | ratio |")
    print("|---|---|---|---|")
    print(
        f"| dispatch (median of {args.tasks}) | {dispatch_local:.0f} ms | {dispatch_api:.0f} ms | "
        f"{dispatch_api / dispatch_local:.1f}x |"
    )
    print(
        f"| {args.steps:,} steps, {BATCH} a batch | {steps_local:.2f} s | {steps_api:.2f} s | "
        f"{steps_api / steps_local:.1f}x |"
    )
    print(
        f"| {args.upload_mb} MB output | {upload_local:.2f} s | {upload_api:.2f} s | {upload_api / upload_local:.1f}x |"
    )
    twice = sum(1 for n in got.values() if n > 1)
    print(f"{args.runners} runners claimed {len(got)} tasks in {elapsed:.2f} s; claimed twice: {twice}")


if __name__ == "__main__":
    main()

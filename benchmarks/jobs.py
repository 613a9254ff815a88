"""Measure job scheduling on real runners (a benchmark, not a test).

    DEBUG=true .venv/bin/python benchmarks/jobs.py [--backend local|docker|both] [--latency-jobs 5] [--concurrent 20]

Everything runs in a throwaway var folder: a SQLite database, the filesystem broker, the smoke
competitions. A runner is started the way an operator starts one (`manage.py runner`, a Celery worker
underneath) and jobs are submitted with `runner.jobs.services.create_job`, as the API does.

1. Queued -> agent started: single-task jobs one after another; each task's time from its creation
   to `agent_started_at` (the sandbox's start). Baseline in the same run: starting the same trivial
   agent directly, with no scheduler (a subprocess for local, `docker run` for Docker): the floor.
2. Concurrency: one job of N seeds (N short tasks) on one runner: every task must end exactly once
   (one attempt, one sandbox folder, one run, graded once). Reports lost / repeated counts and time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VAR = Path(tempfile.mkdtemp(prefix="medalboard-bench-jobs-"))
ENV = {"DEBUG": "true", "DJANGO_SETTINGS_MODULE": "webapp.settings", "MEDALBOARD_VAR_DIR": str(VAR),
       "MEDALBOARD_RUNNER_WORK_DIR": str(VAR / "runner"), "MEDIA_ROOT": str(VAR / "artifacts"),
       "MEDALBOARD_RUNNER_HEARTBEAT_S": "2"}
os.environ.update(ENV)
os.environ.pop("DATABASE_URL", None)
os.environ.pop("CELERY_BROKER_URL", None)
sys.path.insert(0, str(ROOT))

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from leaderboard.models import Run  # noqa: E402
from runner.jobs.services import create_job  # noqa: E402
from runner.models import AgentDefinition, Job, JobTask, Runner  # noqa: E402

COMPETITION = "smoke-wine"
# The trivial agent: copy the sample submission and stop. Same argv for both backends (python3 in the image).
QUICK = ("import os, shutil; shutil.copy(os.path.join(os.environ['DATA_DIR'], 'sample_submission.csv'), "
         "os.path.join(os.environ['SUBMISSION_DIR'], 'submission.csv'))")


def setup() -> None:
    call_command("migrate", verbosity=0)
    call_command("make_smoke_competitions", root=str(VAR / "smoke"), stdout=open(os.devnull, "w"))
    get_user_model().objects.create_user("bench", "bench@example.org", "bench", is_staff=True)


def start_runner(backend: str) -> subprocess.Popen:
    name = f"bench-{backend}"
    log = open(VAR / f"runner-{backend}.log", "wb")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runner", "--backend", backend, "--name", name, "--concurrency", "4",
         "--loglevel", "WARNING"],
        cwd=ROOT, env={**os.environ, **ENV}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    wait(lambda: Runner.objects.filter(name=name, last_heartbeat__isnull=False).exists(), 60, f"runner {name} up")
    time.sleep(3)  # let the worker connect to the broker before the first job
    return process


def stop_runner(process: subprocess.Popen) -> None:
    os.killpg(process.pid, 15)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)


def wait(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.05)
    raise SystemExit(f"benchmark failed: not {what} after {timeout} s (logs in {VAR})")


def quick_agent(backend: str) -> str:
    name = f"quick-{backend}"
    python = "python3" if backend == "docker" else sys.executable
    AgentDefinition.objects.update_or_create(name=name, defaults={"command": [python, "-c", QUICK], "image": ""})
    return name


def submit(agent: str, seeds: int = 1) -> Job:
    user = get_user_model().objects.get(username="bench")
    return create_job(user=user, agent=agent, competitions=[COMPETITION], seeds=seeds, time_limit_minutes=5)


def start_latencies(agent: str, n: int) -> list[float]:
    samples = []
    for _ in range(n):
        job = submit(agent)
        task = wait(lambda job=job: JobTask.objects.filter(job=job, agent_started_at__isnull=False).first(), 120,
                    "started")
        samples.append((task.agent_started_at - task.created_at).total_seconds())
        wait(lambda job=job: not JobTask.objects.filter(job=job).exclude(status__in=JobTask.FINISHED).exists(), 120,
             "finished")
    return samples


def direct_start(backend: str, n: int) -> list[float]:
    """The floor: the same agent started straight away, no queue, no claim, no run row."""
    data = VAR / "smoke" / "data" / COMPETITION / "prepared" / "public"
    samples = []
    for i in range(n):
        out = VAR / f"direct-{backend}-{i}"
        out.mkdir()
        env = {**os.environ, "DATA_DIR": str(data), "SUBMISSION_DIR": str(out)}
        if backend == "local":
            argv = [sys.executable, "-c", "pass"]
        else:
            from django.conf import settings

            image = settings.MEDALBOARD_AGENT_IMAGE
            argv = ["docker", "run", "--rm", "--network", "none", image, "python3", "-c", "pass"]
        started = time.perf_counter()
        subprocess.run(argv, env=env, check=True, capture_output=True)
        samples.append(time.perf_counter() - started)
    return samples


def concurrency(agent: str, n: int) -> dict:
    started = time.perf_counter()
    job = submit(agent, seeds=n)
    wait(lambda: not JobTask.objects.filter(job=job).exclude(status__in=JobTask.FINISHED).exists(), 600,
         f"all {n} tasks finished")
    wait(lambda: not Run.objects.filter(job_task__job=job).exclude(status__in=["graded", "failed"]).exists(), 120,
         "all graded")
    elapsed = time.perf_counter() - started
    tasks = list(JobTask.objects.filter(job=job).select_related("run"))
    workdirs = [p.name for p in (VAR / "runner").iterdir() if any(p.name.startswith(f"task-{t.pk}-") for t in tasks)]
    runs = [t.run for t in tasks if t.run is not None]
    for t in tasks:
        if t.status != JobTask.Status.SUCCEEDED or t.run is None or t.run.status != "graded":
            print(f"  task {t.pk} seed {t.seed}: {t.status}, attempts {t.attempts}, error {t.error[:300]!r}; run "
                  f"{t.run and t.run.pk} {t.run and t.run.status} {t.run and t.run.grading_error[:300]!r}")
    return {
        "tasks": len(tasks), "succeeded": sum(t.status == JobTask.Status.SUCCEEDED for t in tasks),
        "lost": sum(t.run is None or t.status != JobTask.Status.SUCCEEDED for t in tasks),
        "run_twice": sum(t.attempts != 1 for t in tasks) + (len(workdirs) - len(tasks)),
        "graded_twice": sum(r.grading_attempts > 1 for r in runs),
        "runs": Run.objects.filter(job_task__job=job).count(), "distinct_runs": len({r.pk for r in runs}),
        "graded": sum(r.status == "graded" for r in runs), "elapsed_s": elapsed,
    }


def docker_ready() -> str | None:
    try:
        import docker
        from django.conf import settings

        client = docker.from_env()
        client.ping()
        client.images.get(settings.MEDALBOARD_AGENT_IMAGE)
    except Exception as exc:  # noqa: BLE001 - any failure means no Docker part
        return f"{exc.__class__.__name__}: {exc}"
    return None


def report(backend: str, args) -> None:
    runner = start_runner(backend)
    try:
        agent = quick_agent(backend)
        latencies = start_latencies(agent, args.latency_jobs)
        floor = direct_start(backend, args.latency_jobs)
        result = concurrency(agent, args.concurrent)
    finally:
        stop_runner(runner)
    median, floor_median = statistics.median(latencies), statistics.median(floor)
    print(f"\n[{backend}] queued -> agent started, {len(latencies)} jobs: median {median:.2f} s, "
          f"max {max(latencies):.2f} s (target <= 2 s)")
    print(f"[{backend}] baseline, the agent started directly: median {floor_median:.3f} s; "
          f"scheduling adds {median - floor_median:.2f} s ({median / floor_median:.1f}x the direct start)")
    print(f"[{backend}] {result['tasks']} concurrent tasks on one runner (concurrency 4): "
          f"{result['succeeded']} succeeded, {result['lost']} lost, {result['run_twice']} run twice, "
          f"{result['graded_twice']} graded twice; {result['runs']} runs ({result['distinct_runs']} distinct, "
          f"{result['graded']} graded) in {result['elapsed_s']:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["local", "docker", "both"], default="both")
    parser.add_argument("--latency-jobs", type=int, default=5)
    parser.add_argument("--concurrent", type=int, default=20)
    args = parser.parse_args()
    print(f"setting up in {VAR} (SQLite, filesystem broker, smoke competitions) ...")
    setup()
    backends = ["local", "docker"] if args.backend == "both" else [args.backend]
    for backend in backends:
        if backend == "docker" and (why := docker_ready()):
            print(f"\n[docker] skipped: no Docker engine with the agent image here ({why}); "
                  "build it with `python manage.py build_agent_image`")
            continue
        report(backend, args)
    shutil.rmtree(VAR, ignore_errors=True)


if __name__ == "__main__":
    main()

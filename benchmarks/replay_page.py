"""Measure the replay page's first view for a long trajectory (a benchmark, not a test).

    .venv/bin/python benchmarks/replay_page.py --steps 100000 --repeat 20

Creates a throwaway test database, one run with --steps steps of mixed kinds, then times the
replay page and the requests the page makes later (window around the last step, API page,
server-side search) with the Django test client, on the test side of the request.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.test_settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

from leaderboard.models import Agent, Experiment, LanguageModel, Run  # noqa: E402
from leaderboard.trajectories.importers.base import StepData  # noqa: E402
from leaderboard.trajectories.store import write_steps  # noqa: E402

KINDS = ["plan", "code", "command", "observation", "score", "llm"]


def step(i: int) -> StepData:
    kind = KINDS[i % len(KINDS)]
    data = {
        "code": {"file": "train.py", "content": "import pandas as pd\n" * 20, "diff": "+x = 1\n-x = 0"},
        "command": {"command": "python train.py", "stdout": "epoch loss\n" * 30, "exit_code": 0},
        "score": {"metric": "accuracy", "value": 0.5 + (i % 100) / 1000},
    }.get(kind, {})
    score = data["value"] if kind == "score" else None
    parent = (i - 1) // 2 if kind == "code" and i > 1 else None
    return StepData(index=i, kind=kind, t=i * 0.5, title=f"{kind} {i}", text=f"step {i} " * 30,
                    data=data, score=score, parent_index=parent)


def make_run(n: int) -> Run:
    agent = Agent.objects.create(name="bench-agent")
    model = LanguageModel.objects.create(name="bench-model")
    run = Run.objects.create(experiment=Experiment.objects.create(agent=agent, model=model), n_steps=n)
    write_steps(run, (step(i) for i in range(n)))
    return run


def timed(client: Client, url: str, repeat: int) -> dict:
    client.get(url)  # warm caches, templates and the connection
    samples = []
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as queries:
            began = time.perf_counter()
            response = client.get(url)
            samples.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    samples.sort()
    return {"median_ms": statistics.median(samples), "p95_ms": samples[int(0.95 * (len(samples) - 1))],
            "bytes": len(response.content), "queries": len(queries)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        began = time.perf_counter()
        run = make_run(args.steps)
        print(f"created {args.steps} steps in {time.perf_counter() - began:.1f} s ({connection.vendor})")
        client = Client()
        last = args.steps - 1
        for label, url in [
            ("replay page (first view)", f"/runs/{run.pk}/"),
            ("window around last step", f"/runs/{run.pk}/steps/?around={last}"),
            ("API page 0", f"/api/runs/{run.pk}/steps/"),
            ("API around last step", f"/api/runs/{run.pk}/steps/?around={last}"),
            ("API search", f"/api/runs/{run.pk}/steps/?q=step%20{last}%20"),
            ("outline (tree + scores)", f"/api/runs/{run.pk}/outline/"),
        ]:
            r = timed(client, url, args.repeat)
            print(f"{label:28} median {r['median_ms']:7.1f} ms  p95 {r['p95_ms']:7.1f} ms  "
                  f"{r['bytes']:>9,} bytes  {r['queries']} queries")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()

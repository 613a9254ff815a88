"""Search across runs against a scan of the stored files (a benchmark, not a test).

    DEBUG=true .venv/bin/python benchmarks/search.py [--runs 200] [--steps 500] [--repeat 5]
    DATABASE_URL=postgres://... .venv/bin/python benchmarks/search.py ...     # the PostgreSQL engine

Creates a throwaway test database with --runs runs of --steps generated steps each (about 300 bytes
of text a step, errors, code and paths among them; the issue's target is 10,000 runs x 1,000 steps, a
machine with the disk for 10M steps), imported through the store as every import is, so the search
rows and the engine's index are built on the way. Then, for each query, the first page's time through
the search (the engine narrows, the exact check confirms) and through the baseline: reading every
run's stored file newest first, checking each step with the same exact check until the page is full.
Prints both (best of --repeat), their ratio, and the sizes of the files, the rows and the engine's
index (SQLite: dbstat; PostgreSQL: pg_total_relation_size).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.test_settings")

import django  # noqa: E402

django.setup()

from django.core.files.storage import default_storage  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from leaderboard.models import Agent, Experiment, LanguageModel, Run, Trajectory  # noqa: E402
from leaderboard.search.query import parse  # noqa: E402
from leaderboard.search.service import PAGE_HITS, search  # noqa: E402
from leaderboard.search.text import step_text  # noqa: E402
from leaderboard.trajectories.importers.base import StepData  # noqa: E402
from leaderboard.trajectories.store import StoredTrajectory, write_steps  # noqa: E402

QUERIES = ["quokka", '"CUDA out of memory"', "\"KeyError: 'zanzibar_id'\"", "loss", "valid*", "train.csv"]
WORDS = ("the model loss epoch train valid accuracy feature column batch learning rate tree boost "
         "predict submission score fold split data frame value").split()


def steps(rng: random.Random, run_no: int, n: int):
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(40)) + f" {rng.random():.6f}"
        kind = rng.choice(["plan", "code", "command", "observation"])
        if i == n - 1 and run_no % 10 == 0:
            kind, text = "error", "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
        if i == n // 2 and run_no % 97 == 0:
            kind, text = "error", text + " KeyError: 'zanzibar_id' and a quokka"
        code = f"pd.read_csv('/kaggle/input/train.csv')  # {i}"
        data = {"file": "runfile.py", "content": code} if kind == "code" else {}
        yield StepData(index=i, kind=kind, title=f"step {i}", text="" if kind == "code" else text, data=data)


def build(n_runs: int, n_steps: int) -> None:
    agent, _ = Agent.objects.get_or_create(name="bench-agent")
    model, _ = LanguageModel.objects.get_or_create(name="bench-model")
    experiment, _ = Experiment.objects.get_or_create(agent=agent, model=model)
    rng = random.Random(0)
    for k in range(n_runs):
        write_steps(Run.objects.create(experiment=experiment), steps(rng, k, n_steps))


def scan(query: str) -> int:
    """The first page by reading the files: the baseline."""
    parsed, hits = parse(query), 0
    for run in Run.objects.order_by("-pk"):
        for step in StoredTrajectory.of(run).steps():
            if parsed.spans(step_text(step.title, step.text, step.data)) is not None:
                hits += 1
                if hits >= PAGE_HITS:
                    return hits
    return hits


def best(fn, repeat: int) -> tuple[float, int]:
    times, result = [], 0
    for _ in range(repeat):
        began = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - began)
    return min(times), result


def sizes() -> dict[str, int]:
    files = sum(default_storage.size(f) for f in Trajectory.objects.values_list("file", flat=True))
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_table_size('leaderboard_steptext'), pg_indexes_size('leaderboard_steptext')")
            rows, index = cursor.fetchone()
        else:
            cursor.execute("SELECT name, SUM(pgsize) FROM dbstat WHERE name LIKE 'leaderboard_steptext%' GROUP BY name")
            by_name = dict(cursor.fetchall())
            rows = by_name.pop("leaderboard_steptext", 0)
            index = sum(by_name.values())
    return {"trajectory files": files, "search rows": rows, "engine index": index}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        began = time.perf_counter()
        build(args.runs, args.steps)
        print(f"{connection.vendor}: {args.runs:,} runs x {args.steps:,} steps imported in "
              f"{time.perf_counter() - began:.1f} s")
        for name, size in sizes().items():
            print(f"  {name:18} {size / 1e6:9.1f} MB")
        print(f"{'query':34} {'hits':>5} {'search ms':>10} {'scan ms':>10} {'scan/search':>12}")
        for query in QUERIES:
            found, hits = best(lambda q=query: search(user=None, query=q), args.repeat)
            scanned, scan_hits = best(lambda q=query: scan(q), max(1, args.repeat // 2))
            n = sum(len(g.hits) for g in hits.groups)
            assert n == scan_hits, (query, n, scan_hits)  # both give the same first page size
            print(f"{query:34} {n:5} {found * 1e3:10.1f} {scanned * 1e3:10.1f} {scanned / found:11.1f}x")
    finally:
        for run in Run.objects.all():
            run.delete()
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()

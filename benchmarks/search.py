"""Search across runs against a scan of the stored files (a benchmark, not a test).

    DEBUG=true .venv/bin/python benchmarks/search.py [--runs 200] [--steps 500] [--repeat 5]
    DATABASE_URL=postgres://.../srch_bench .venv/bin/python benchmarks/search.py ...   # PostgreSQL

Creates a throwaway test database (on PostgreSQL `test_` + the URL's database name, dropped after)
with --runs runs of --steps steps each, their text drawn from the real public trajectories
(benchmarks/support/real_steps.py: about 1 KB a step of real words, code, paths and tracebacks), a
few rare lines added at known places (an out-of-memory error closing every 10th run, a KeyError and a
"quokka" in every 97th). Every run is imported through the store as every import is
(store.write_steps: the file, its block rows, its search rows and the engine's index), 50 runs to a
transaction. With --bulk on PostgreSQL the words' GIN index is dropped for the load and built again
after it (what a restore does; the index it builds is the same), its time shown apart.

Then, for each query, the first page's time through the search (the engine narrows, the exact check
confirms) and through the baseline: reading every run's stored file newest first, checking each step
with the same exact check until the page is full (best of --repeat, the scan best of --scan-repeat),
their ratio, and the sizes of the files, the rows and the engine's index (SQLite: dbstat;
PostgreSQL: pg_table_size and pg_indexes_size).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.test_settings")

import django  # noqa: E402

django.setup()

from django.core.files.storage import default_storage  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from support.real_steps import Generator  # noqa: E402

from leaderboard.models import Agent, Experiment, LanguageModel, Run, Trajectory  # noqa: E402
from leaderboard.search.query import parse  # noqa: E402
from leaderboard.search.service import PAGE_HITS, search  # noqa: E402
from leaderboard.search.text import step_text  # noqa: E402
from leaderboard.trajectories.store import StoredTrajectory, write_steps  # noqa: E402

QUERIES = ["quokka", '"CUDA out of memory"', "\"KeyError: 'zanzibar_id'\"", "import", "valid*", "train.csv",
           "model loss", '"rror"']
TRANSACTION_RUNS = 50


def needles(run_no: int, n: int) -> dict[int, str]:
    found = {}
    if run_no % 10 == 0:
        found[n - 1] = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    if run_no % 97 == 0:
        found[n // 2] = "KeyError: 'zanzibar_id' and a quokka"
    return found


def build(n_runs: int, n_steps: int, bulk: bool) -> float:
    """The runs, imported; returns the seconds spent building the index again after a bulk load."""
    agent, _ = Agent.objects.get_or_create(name="bench-agent")
    model, _ = LanguageModel.objects.get_or_create(name="bench-model")
    experiment, _ = Experiment.objects.get_or_create(agent=agent, model=model)
    generator = Generator(0)
    dropped = bulk and connection.vendor == "postgresql"
    if dropped:
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX steptext_words_gin")
    began = time.perf_counter()
    for start in range(0, n_runs, TRANSACTION_RUNS):
        with transaction.atomic():
            for k in range(start, min(n_runs, start + TRANSACTION_RUNS)):
                write_steps(Run.objects.create(experiment=experiment), generator.steps(n_steps, needles(k, n_steps)))
        if start and start % (TRANSACTION_RUNS * 20) == 0:
            done = start + TRANSACTION_RUNS
            print(f"  {done:,} runs in {time.perf_counter() - began:.0f} s", flush=True)
    if not dropped:
        return 0.0
    began = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '256MB'")
        cursor.execute("CREATE INDEX steptext_words_gin ON leaderboard_steptext USING gin (words_tsv)")
    return time.perf_counter() - began


def scan(query: str, limit_s: float = 0) -> tuple[int, bool]:
    """The first page by reading the files: the baseline. (hits, whether it finished): with
    `limit_s` it gives up after that many seconds, and its time is a lower bound."""
    parsed, hits, began = parse(query), 0, time.perf_counter()
    for run in Run.objects.order_by("-pk"):
        for step in StoredTrajectory.of(run).steps():
            if parsed.spans(step_text(step.title, step.text, step.data)) is not None:
                hits += 1
                if hits >= PAGE_HITS:
                    return hits, True
        if limit_s and time.perf_counter() - began > limit_s:
            return hits, False
    return hits, True


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
            cursor.execute("SELECT pg_table_size('leaderboard_steptext'), pg_indexes_size('leaderboard_steptext'), "
                           "pg_relation_size('steptext_words_gin')")
            rows, indexes, engine = cursor.fetchone()
        else:
            cursor.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")
            by_name = dict(cursor.fetchall())
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'leaderboard_steptext'")
            indexes = sum(by_name.get(name, 0) for (name,) in cursor.fetchall())
            rows = by_name.get("leaderboard_steptext", 0)
            engine = sum(v for k, v in by_name.items() if k.startswith("leaderboard_steptext_fts"))
            indexes += engine
    return {"trajectory files": files, "search rows": rows, "engine index": engine,
            "row b-tree indexes": indexes - engine}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scan-repeat", type=int, default=2)
    parser.add_argument("--scan-max-s", type=float, default=0,
                        help="stop a scan after this many seconds (then its time is a lower bound, shown with >)")
    parser.add_argument("--bulk", action="store_true", help="PostgreSQL: build the words' GIN index after the load")
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        began = time.perf_counter()
        reindex_s = build(args.runs, args.steps, args.bulk)
        elapsed = time.perf_counter() - began
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE" if connection.vendor == "postgresql" else "ANALYZE leaderboard_steptext")
        n = args.runs * args.steps
        print(f"{connection.vendor}: {args.runs:,} runs x {args.steps:,} steps imported in {elapsed:.0f} s "
              f"({elapsed / n * 1e6:.0f} us a step" + (f"; the GIN index built after the load: {reindex_s:.0f} s"
                                                       if reindex_s else "") + ")")
        for name, size in sizes().items():
            print(f"  {name:18} {size / 1e6:9.1f} MB")
        print(f"{'query':34} {'hits':>5} {'read':>6} {'search ms':>10} {'scan ms':>10} {'scan/search':>12}", flush=True)
        for query in QUERIES:
            found, page = best(lambda q=query: search(user=None, query=q), args.repeat)
            scanned, (scan_hits, finished) = best(lambda q=query: scan(q, args.scan_max_s), args.scan_repeat)
            n_hits = sum(len(g.hits) for g in page.groups)
            short = page.next_cursor is not None and n_hits < PAGE_HITS  # a rare term far back: see docs
            over = "" if finished else ">"
            print(f"{query:34} {n_hits:5} {page.rows_read:6} {found * 1e3:10.1f} {over:>1}{scanned * 1e3:9.1f} "
                  f"{over:>1}{scanned / found:10.1f}x"
                  + (f"  (short page: the scan found {scan_hits})" if short else ""), flush=True)
            assert short or not finished or n_hits == scan_hits, (query, n_hits, scan_hits)  # the same page size
    finally:
        for run in Run.objects.all():
            run.delete()
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()

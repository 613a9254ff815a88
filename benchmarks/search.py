"""Search across runs against a scan of the stored files (a benchmark, not a test).

    DEBUG=true .venv/bin/python benchmarks/search.py [--runs 200] [--steps 500] [--repeat 5]
    DATABASE_URL=postgres://.../srch_bench .venv/bin/python benchmarks/search.py ...   # PostgreSQL

Creates a throwaway test database (on PostgreSQL `test_` + the URL's database name, dropped after)
(kept with --keep DIR, and reused: only the runs missing are generated) with --runs runs of --steps
steps each, their text drawn from the real public trajectories
(benchmarks/support/real_steps.py: about 1 KB a step of real words, code, paths and tracebacks), a
few rare lines added at known places (an out-of-memory error closing every 10th run, a KeyError and a
"quokka" in every 97th). Every run is imported through the store as every import is
(store.write_steps: the file, its block rows, its search rows and the engine's index), 50 runs to a
transaction. With --bulk on PostgreSQL the words' and the trigram GIN indexes are dropped for the load
and built again after it (what a restore does; the indexes it builds are the same), its time shown
apart. --fast writes each run's file and block rows as an import does but its search rows straight
from the generated steps (SQLite: the FTS5 table built once after the load; PostgreSQL: COPY), 10-20x
faster; --files N (with --fast) gives files of their own to the first N runs only, run k sharing run
k % N's file and copying its rows (disk: 10M steps of files are 14 GB; 485 = 5 x 97 keeps the rare
lines as rare), so the scan then reads files the page cache may hold.

Then, for each query, the first page's time through the search (the engine narrows, the exact check
confirms) and through the baseline: reading every run's stored file newest first, checking each step
with the same exact check until the page is full (best of --repeat, the scan best of --scan-repeat),
their ratio, and the sizes of the files, the rows and the engine's index (SQLite: dbstat;
PostgreSQL: pg_table_size and pg_indexes_size).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.test_settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.files.storage import default_storage  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from support.real_steps import Generator  # noqa: E402

from leaderboard.models import Agent, Experiment, LanguageModel, Run, StepBlock, Trajectory  # noqa: E402
from leaderboard.questions.matching import counts, scoped_runs  # noqa: E402
from leaderboard.questions.models import SavedQuestion  # noqa: E402
from leaderboard.search.engines import FTS_TABLE  # noqa: E402
from leaderboard.search.index import INSERT, ROW, rows_of  # noqa: E402
from leaderboard.search.models import StepText  # noqa: E402
from leaderboard.search.query import parse  # noqa: E402
from leaderboard.search.service import PAGE_HITS, search  # noqa: E402
from leaderboard.search.text import step_text  # noqa: E402
from leaderboard.trajectories.store import StoredTrajectory, write_steps, write_trajectory  # noqa: E402

# `"ingthe"`: inside one word, in no step, its trigrams common (`ing`, `ngt` and `gth` of `length`, `the`)
QUERIES = ["quokka", '"CUDA out of memory"', "\"KeyError: 'zanzibar_id'\"", "import", "valid*", "train.csv",
           "model loss", '"rror"', '"out of memory"', '"the model"', '"ingthe"']
TRANSACTION_RUNS = 50


def needles(run_no: int, n: int) -> dict[int, str]:
    found = {}
    if run_no % 10 == 0:
        found[n - 1] = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    if run_no % 97 == 0:
        found[n // 2] = "KeyError: 'zanzibar_id' and a quokka"
    return found


def build(n_runs: int, n_steps: int, bulk: bool, fast: bool, first: int = 0, files: int = 0) -> float:
    """Runs `first` to n_runs, imported; returns the seconds spent building the index again after a
    bulk load. `fast`: each run's file and block rows as an import writes them, its search rows from
    the generated steps (not read back from the file), and on SQLite the FTS5 table built once at the
    end, on PostgreSQL the rows sent by COPY. `files` (with `fast`): only the first `files` runs get
    files of their own; run k shares run k % files's file and copies its rows (a multiple of 970 keeps
    the rare lines where needles() puts them)."""
    agent, _ = Agent.objects.get_or_create(name="bench-agent")
    model, _ = LanguageModel.objects.get_or_create(name="bench-model")
    experiment, _ = Experiment.objects.get_or_create(agent=agent, model=model)
    generator = Generator(first)
    dropped = bulk and connection.vendor == "postgresql"
    if dropped:
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX steptext_words_gin")
            cursor.execute("DROP INDEX IF EXISTS steptext_text_trgm")
    if fast and connection.vendor == "sqlite":  # a load, not a site: no WAL to grow, nothing to sync
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode = DELETE")
            cursor.execute("PRAGMA synchronous = OFF")
    began = time.perf_counter()
    templates = list(Run.objects.order_by("pk").values_list("pk", flat=True)[:files]) if files else []
    for start in range(first, n_runs, TRANSACTION_RUNS):
        with transaction.atomic():
            for k in range(start, min(n_runs, start + TRANSACTION_RUNS)):
                run = Run.objects.create(experiment=experiment)
                if fast and files and k >= files:
                    copy_run(run, templates[k % files])
                elif fast:
                    steps = list(generator.steps(n_steps, needles(k, n_steps)))
                    trajectory = write_trajectory(default_storage, run.pk, steps, Trajectory, StepBlock)
                    load_rows(trajectory, steps)
                    templates.append(run.pk)
                else:
                    write_steps(run, generator.steps(n_steps, needles(k, n_steps)))
        done = start + TRANSACTION_RUNS
        if done % (TRANSACTION_RUNS * 20) == 0:
            print(f"  {done:,} runs in {time.perf_counter() - began:.0f} s", flush=True)
    rebuilt = 0.0
    if fast and connection.vendor == "sqlite":
        began = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
        rebuilt = time.perf_counter() - began
        print(f"  the FTS5 table built in {rebuilt:.0f} s", flush=True)
    if not dropped:
        return rebuilt
    began = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute("CREATE INDEX steptext_words_gin ON leaderboard_steptext USING gin (words_tsv)")
        print(f"  the words' GIN index built in {time.perf_counter() - began:.0f} s", flush=True)
        cursor.execute("CREATE INDEX steptext_text_trgm ON leaderboard_steptext USING gin (text gin_trgm_ops)")
    return time.perf_counter() - began


def copy_run(run, template: int) -> None:
    """The template run's trajectory (the same file), block rows and search rows, for `run`."""
    source = Trajectory.objects.get(run_id=template)
    trajectory = Trajectory.objects.create(run=run, file=source.file, n_steps=source.n_steps,
                                           kind_counts=source.kind_counts, outline=source.outline)
    fields = ["first", "count", "offset", "length", "kinds", "diff_bases", "kind_mask", "kinds_before"]
    StepBlock.objects.bulk_create([StepBlock(trajectory=trajectory, **row) for row in
                                   StepBlock.objects.filter(trajectory=source).values(*fields)])
    with connection.cursor() as cursor:
        cursor.execute('INSERT INTO leaderboard_steptext (trajectory_id, run_id, "index", kind, text, words) '
                       'SELECT %s, %s, "index", kind, text, words FROM leaderboard_steptext WHERE run_id = %s '
                       'ORDER BY "index"', [trajectory.pk, run.pk, template])


def load_rows(trajectory, steps) -> None:
    """The search rows of generated steps, without the engine's per-batch work: SQLite's FTS5 table
    is built after the load (build), PostgreSQL's rows go by COPY (its indexes kept as they are)."""
    texts = ((s.index, s.kind, step_text(s.title or "", s.text or "", s.data)) for s in steps)
    rows = rows_of(trajectory, texts)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            buffer = io.StringIO()
            for row in rows:
                buffer.write("\t".join(_copy_field(v) for v in row) + "\n")
            buffer.seek(0)
            cursor.cursor.copy_expert('COPY leaderboard_steptext (trajectory_id, run_id, "index", kind, text, words) '
                                      "FROM STDIN", buffer)
        else:
            cursor.executemany(INSERT + ROW, list(rows))


def _copy_field(value) -> str:
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


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


def question_scan(query: str, limit_s: float = 0) -> tuple[int, bool]:
    """A saved question's count by reading the files: every run's file until its first matching step.
    (runs matched, whether it finished), as scan()."""
    parsed, matched, began = parse(query), 0, time.perf_counter()
    for run in Run.objects.order_by("pk"):
        for step in StoredTrajectory.of(run).steps():
            if parsed.spans(step_text(step.title, step.text, step.data)) is not None:
                matched += 1
                break
        if limit_s and time.perf_counter() - began > limit_s:
            return matched, False
    return matched, True


def question_counts(query: str) -> int:
    """The runs a saved search question matches, as the experiment comparison counts them."""
    experiment = Experiment.objects.get(agent__name="bench-agent")
    question = SavedQuestion(kind=SavedQuestion.Kind.SEARCH, query=query)
    return sum(counts(question, scoped_runs(None, experiment.pk)).values())


def best(fn, repeat: int) -> tuple[float, int]:
    times, result = [], 0
    for _ in range(repeat):
        began = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - began)
    return min(times), result


def sizes() -> dict[str, int]:
    names = Trajectory.objects.order_by().values_list("file", flat=True).distinct()  # --files: runs share files
    files = sum(default_storage.size(name) for name in names)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_table_size('leaderboard_steptext'), pg_indexes_size('leaderboard_steptext'), "
                           "pg_relation_size('steptext_words_gin'), pg_relation_size('steptext_text_trgm')")
            rows, indexes, engine, trigrams = cursor.fetchone()
            indexes -= trigrams
        else:
            cursor.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")
            by_name = dict(cursor.fetchall())
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'leaderboard_steptext'")
            indexes = sum(by_name.get(name, 0) for (name,) in cursor.fetchall())
            rows = by_name.get("leaderboard_steptext", 0)
            engine = sum(v for k, v in by_name.items() if k.startswith("leaderboard_steptext_fts"))
            indexes, trigrams = indexes + engine, 0
    return {"trajectory files": files, "search rows": rows, "engine index": engine, "trigram index": trigrams,
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
    parser.add_argument("--fast", action="store_true",
                        help="search rows from the generated steps (SQLite: FTS5 built after; PostgreSQL: COPY)")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep the database (SQLite: DIR/search.sqlite3; PostgreSQL: test_<name>) and the files "
                        "(DIR/artifacts) after the run, and reuse them: only the runs missing are generated")
    parser.add_argument("--files", type=int, default=0,
                        help="with --fast: files of their own for this many runs only, the rest sharing them (disk)")
    parser.add_argument("--query", action="append", help="a query to time (repeatable; default: the standard set)")
    parser.add_argument("--questions", action="store_true",
                        help="also time each query as a saved question counted over every run, against reading "
                        "every run's file until its first match")
    args = parser.parse_args()
    setup_test_environment()
    if args.keep:
        keep = Path(args.keep).resolve()
        (keep / "artifacts").mkdir(parents=True, exist_ok=True)
        settings.MEDIA_ROOT = str(keep / "artifacts")
        if connection.vendor == "sqlite":
            connection.settings_dict["TEST"]["NAME"] = str(keep / "search.sqlite3")
    # serialize=False: the test runner's copy of every row (for its rollback emulation) is no benchmark's need,
    # and of a kept database it is the whole index in memory
    old_name = connection.creation.create_test_db(verbosity=0, keepdb=bool(args.keep), serialize=False)
    try:
        began = time.perf_counter()
        have = Run.objects.count()
        reindex_s = build(args.runs, args.steps, args.bulk, args.fast, first=have,
                                                                 files=args.files) if have < args.runs else 0.0
        elapsed = time.perf_counter() - began
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute("PRAGMA analysis_limit = 1000")  # a sample: a full ANALYZE reads every row
            cursor.execute("ANALYZE" if connection.vendor == "postgresql" else "ANALYZE leaderboard_steptext")
        n = (args.runs - have) * args.steps
        steps = StepText.objects.count()
        print(f"{connection.vendor}: {Run.objects.count():,} runs, {steps:,} steps; {n:,} imported in {elapsed:.0f} s"
              + (f" ({elapsed / n * 1e6:.0f} us a step" + (f"; the index built after the load: {reindex_s:.0f} s"
                                                          if reindex_s else "") + ")" if n else ""))
        for name, size in sizes().items():
            print(f"  {name:18} {size / 1e6:9.1f} MB")
        print(f"{'query':34} {'hits':>5} {'read':>6} {'search ms':>10} {'scan ms':>10} {'scan/search':>12}", flush=True)
        for query in args.query or QUERIES:
            found, page = best(lambda q=query: search(user=None, query=q), args.repeat)
            scanned, (scan_hits, finished) = best(lambda q=query: scan(q, args.scan_max_s), args.scan_repeat)
            n_hits = sum(len(g.hits) for g in page.groups)
            short = page.next_cursor is not None and n_hits < PAGE_HITS  # a rare term far back: see docs
            over = "" if finished else ">"
            print(f"{query:34} {n_hits:5} {page.rows_read:6} {found * 1e3:10.1f} {over:>1}{scanned * 1e3:9.1f} "
                  f"{over:>1}{scanned / found:10.1f}x"
                  + (f"  (short page: the scan found {scan_hits})" if short else ""), flush=True)
            assert short or not finished or n_hits == scan_hits, (query, n_hits, scan_hits)  # the same page size
        if args.questions:
            print(f"{'saved question':34} {'runs':>5} {'count ms':>10} {'scan ms':>10} {'scan/count':>12}", flush=True)
            for query in args.query or QUERIES:
                counted, matched = best(lambda q=query: question_counts(q), args.repeat)
                scanned, (scan_matched, finished) = best(lambda q=query: question_scan(q, args.scan_max_s),
                                                         args.scan_repeat)
                over, note = ("", "") if finished else (">", f"  (the scan: {scan_matched} runs)")
                print(f"{query:34} {matched:5} {counted * 1e3:10.1f} {over:>1}{scanned * 1e3:9.1f} "
                      f"{over:>1}{scanned / counted:10.1f}x{note}", flush=True)
                assert not finished or matched == scan_matched, (query, matched, scan_matched)
    finally:
        if not args.keep:
            for run in Run.objects.all():
                run.delete()
            connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()

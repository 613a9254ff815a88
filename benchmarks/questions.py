"""Saved questions' counts per experiment against a scan of the stored files (a benchmark, not a test).

    DEBUG=true .venv/bin/python benchmarks/questions.py [--runs 400] [--steps 200] [--repeat 3]
    DATABASE_URL=postgres://... .venv/bin/python benchmarks/questions.py ...     # the PostgreSQL engine

Creates a throwaway test database with --runs runs of two experiments, --steps generated steps each
(benchmarks/search.py's steps: every 10th run ends in a CUDA OOM, every 97th holds a KeyError), every
run graded, those with an error step failed. For each search question, the time of the counts the
experiment comparison shows (leaderboard.questions.matching.counts) and of the baseline: reading each
run's stored file and checking its steps with the same exact check until one matches. The counts must
agree. The failure question is timed alone (it reads two queries' worth of rows, whatever the runs).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.test_settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from benchmarks.search import best, steps  # noqa: E402
from leaderboard.models import Agent, Experiment, LanguageModel, Run  # noqa: E402
from leaderboard.questions import matching  # noqa: E402
from leaderboard.questions.models import SavedQuestion  # noqa: E402
from leaderboard.search.query import parse  # noqa: E402
from leaderboard.search.text import step_text  # noqa: E402
from leaderboard.trajectories.store import StoredTrajectory, write_steps  # noqa: E402

SEARCHES = ['"CUDA out of memory"', "\"KeyError: 'zanzibar_id'\"", "quokka", "loss", "train.csv"]


def build(n_runs: int, n_steps: int) -> list[int]:
    model, _ = LanguageModel.objects.get_or_create(name="bench-model")
    experiments = [
        Experiment.objects.create(agent=Agent.objects.get_or_create(name=f"bench-{k}")[0], model=model)
        for k in range(2)
    ]
    rng = random.Random(0)
    for k in range(n_runs):
        failed = k % 10 == 0 or k % 97 == 0
        run = Run.objects.create(
            experiment=experiments[k % 2],
            status=Run.Status.GRADED,
            score=None if failed else 0.5,
            submission_exists=not failed,
            valid_submission=not failed,
        )
        write_steps(run, steps(rng, k, n_steps))
    return [e.pk for e in experiments]


def scan(query: str) -> Counter:
    """The baseline: each run's stored file, read until a step matches."""
    parsed, found = parse(query), Counter()
    for run in Run.objects.order_by("pk"):
        if any(parsed.spans(step_text(s.title, s.text, s.data)) is not None for s in StoredTrajectory.of(run).steps()):
            found[run.experiment_id] += 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        began = time.perf_counter()
        experiments = build(args.runs, args.steps)
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")  # as autovacuum would have, on a site that has its rows for a while
        print(
            f"{connection.vendor}: {args.runs:,} runs x {args.steps:,} steps imported in "
            f"{time.perf_counter() - began:.1f} s"
        )
        runs = matching.scoped_runs(None, experiments)
        print(f"{'question':34} {'runs':>5} {'counts ms':>10} {'scan ms':>10} {'scan/counts':>12}")
        for query in SEARCHES:
            question = SavedQuestion(kind="search", query=query)
            took, counted = best(lambda q=question: matching.counts(q, runs), args.repeat)
            scanned, expected = best(lambda q=query: scan(q), 1)
            assert counted == expected, (query, counted, expected)
            print(
                f"{query:34} {sum(counted.values()):5} {took * 1e3:10.1f} {scanned * 1e3:10.1f} {scanned / took:11.1f}x"
            )
        question = SavedQuestion(kind="failure", signature="out of memory")
        took, counted = best(lambda: matching.counts(question, runs), args.repeat)
        print(f"{'failure: out of memory':34} {sum(counted.values()):5} {took * 1e3:10.1f}")
    finally:
        for run in Run.objects.all():
            run.delete()
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()

"""Comparing one new run's code with the stored runs of its competition: through the inverted index
of fingerprint hashes, against comparing it pairwise (a benchmark, not a test).

    DEBUG=true .venv/bin/python benchmarks/similarity.py [--sizes 1000,10000] [--repeat 5]

Creates a throwaway test database holding, for each size, that many runs of one competition with
generated code (about 130 lines each: the same imports, reading and writing as every solution has,
lines drawn from a pool of common idioms, and statements built at random), fingerprinted and indexed
as `index_code` would. Then, for new runs (a copy of a stored run with new names, and fresh code),
it times:

- index: the postings of the new run's hashes, counted per stored fingerprint (`index.candidates`);
- pairwise, stored fingerprints: every stored fingerprint of the competition read and intersected
  with the new one (NumPy), the baseline that needs no index;
- pairwise, from code: fingerprinting each stored run's code again and intersecting, timed on the
  first 200 runs and scaled to the size (what a tool without stored fingerprints does).

It checks that the index and the stored-fingerprint baseline find the same pairs and similarities,
and prints each time per new run, per stored run, and the baseline / index ratio. Fingerprinting the
new run's own code is the same work either way and is printed apart.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.test_settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

from leaderboard.models import Agent, Benchmark, Competition, Experiment, LanguageModel, Run  # noqa: E402
from leaderboard.trust.similarity import counts, index  # noqa: E402
from leaderboard.trust.similarity.models import CodeFingerprint, CodeHashCount, CodePosting  # noqa: E402

SAMPLE = 200  # stored runs fingerprinted again by the from-code baseline, scaled to the size
BOILERPLATE = '''import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split, KFold
from sklearn.metrics import accuracy_score, roc_auc_score
train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")
'''
ENDING = '''submission = pd.DataFrame({"id": test["id"], "target": predictions})
submission.to_csv("/home/submission/submission.csv", index=False)
'''
IDIOMS = [
    'X = train.drop(columns=["target"])', 'y = train["target"]', "model.fit(X_train, y_train)",
    "preds = model.predict_proba(X_valid)[:, 1]", 'print("AUC", roc_auc_score(y_valid, preds))',
    "X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=42)",
    "for col in categorical:", '    df[col] = df[col].astype("category")', "df = df.fillna(0)",
    "kf = KFold(n_splits=5, shuffle=True, random_state=0)", "for fold, (tr, va) in enumerate(kf.split(X)):",
    "    oof[va] = model.predict(X.iloc[va])", "scores.append(accuracy_score(y_valid, preds > 0.5))",
    'params = {"learning_rate": 0.05, "max_depth": 6, "n_estimators": 500}',
    "predictions = np.mean(test_preds, axis=0)",
]


def name(rng: random.Random) -> str:
    return rng.choice("abcdefghijklmnopqrstuvwxyz") + str(rng.randrange(100))


def expression(rng: random.Random, depth: int = 0) -> str:
    r = rng.random()
    if depth > 2 or r < 0.3:
        return rng.choice([name(rng), str(rng.randrange(10)), '"s"'])
    if r < 0.55:
        args = ", ".join(expression(rng, depth + 1) for _ in range(rng.randrange(4)))
        return f"{name(rng)}.{name(rng)}({args})"
    if r < 0.75:
        return f"{expression(rng, depth + 1)} {rng.choice('+-*/%<>')} {expression(rng, depth + 1)}"
    if r < 0.9:
        return f"{name(rng)}[{expression(rng, depth + 1)}]"
    return f"[{expression(rng, depth + 1)} for {name(rng)} in {expression(rng, depth + 1)}]"


def statement(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.2:
        return rng.choice(IDIOMS).strip()
    if r < 0.3:
        return f"if {expression(rng)}:\n    {name(rng)} = {expression(rng)}"
    if r < 0.35:
        return f"def {name(rng)}({name(rng)}, {name(rng)}):\n    return {expression(rng)}"
    return f"{name(rng)} = {expression(rng)}"


def program(rng: random.Random, statements: int = 110) -> str:
    return BOILERPLATE + "\n".join(statement(rng) for _ in range(statements)) + "\n" + ENDING


def renamed(code: str) -> str:
    """The same program with every one-letter-and-digits name changed: what a copier's rename does."""
    import re

    return re.sub(r"\b([a-z])(\d+)\b", lambda m: f"var_{m.group(2)}_{m.group(1)}", code)


class Pool:
    """Generated programs and their fingerprints, made once for the largest size: fingerprinting
    costs tens of milliseconds a program, the setup's longest part."""

    def __init__(self, n: int, rng: random.Random) -> None:
        began = time.perf_counter()
        self.codes = [program(rng) for _ in range(n)]
        with ProcessPoolExecutor(os.cpu_count()) as workers:
            self.hashes = list(workers.map(_fingerprint, self.codes, chunksize=64))
        print(f"fingerprinted {n:,} programs in {time.perf_counter() - began:.0f} s", flush=True)


def _fingerprint(code: str) -> np.ndarray:
    return index.hashes_of([code])


def setup_runs(n: int, pool: Pool) -> Competition:
    """n runs with generated code, stored as index.store stores them, in bulk and one transaction
    (one store per run would spend most of the setup committing)."""
    benchmark, _ = Benchmark.objects.get_or_create(slug="bench", defaults={"name": "bench"})
    competition = Competition.objects.create(benchmark=benchmark, slug=f"bench-{n}", name=f"bench {n}")
    agent, _ = Agent.objects.get_or_create(name="bench-agent")
    model, _ = LanguageModel.objects.get_or_create(name="bench-model")
    experiment, _ = Experiment.objects.get_or_create(agent=agent, model=model)
    hashes = pool.hashes[:n]
    with transaction.atomic():
        runs = Run.objects.bulk_create(Run(experiment=experiment, competition=competition, seed=i) for i in range(n))
        fps = CodeFingerprint.objects.bulk_create(
            CodeFingerprint(run=run, competition=competition, size=len(h), hashes=h.astype("<i8").tobytes())
            for run, h in zip(runs, hashes, strict=True))
        # The rows index.store and counts.add write, by executemany: a model object per row was most
        # of the setup.
        _insert(CodePosting, ["competition_id", "hash", "fingerprint_id", "is_reference"],
                ((competition.pk, int(x), fp.pk, False) for fp, h in zip(fps, hashes, strict=True) for x in h))
        held = Counter(int(x) for h in hashes for x in h)
        _insert(CodeHashCount, ["competition_id", "hash", "runs"], ((competition.pk, x, k) for x, k in held.items()))
    return competition


def _insert(model, columns: list[str], rows, batch: int = 20_000) -> None:
    quote = connection.ops.quote_name
    sql = (f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(c) for c in columns)}) "
           f"VALUES ({', '.join(['%s'] * len(columns))})")
    rows = iter(rows)
    with connection.cursor() as cursor:
        while chunk := list(itertools.islice(rows, batch)):
            cursor.executemany(sql, chunk)


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - began)
    return min(times), result


def pairwise_stored(fp: CodeFingerprint, hashes: np.ndarray) -> dict[int, tuple[int, float]]:
    """Every stored fingerprint read and intersected with the new one, boilerplate left out as the
    index leaves it out."""
    mine = np.setdiff1d(hashes, np.array(sorted(counts.common(fp.competition_id, hashes.tolist())), dtype=np.int64))
    found = {}
    rows = CodeFingerprint.objects.filter(competition_id=fp.competition_id).exclude(pk=fp.pk)
    for run_id, blob in rows.values_list("run_id", "hashes").iterator(chunk_size=2000):
        theirs = np.frombuffer(bytes(blob), dtype="<i8")
        shared = len(np.intersect1d(mine, theirs, assume_unique=True))
        if shared:
            found[run_id] = (shared, index.similarity(shared, len(hashes), len(theirs)))
    return found


def pairwise_code(code: str, codes: list[str]) -> int:
    mine = index.hashes_of([code])
    return sum(bool(len(np.intersect1d(mine, index.hashes_of([c]), assume_unique=True))) for c in codes)


def measure(n: int, repeat: int, pool: Pool, rng: random.Random) -> list[dict]:
    began = time.perf_counter()
    competition, codes = setup_runs(n, pool), pool.codes[:n]
    print(f"stored {n:,} runs' fingerprints in {time.perf_counter() - began:.0f} s ({connection.vendor})", flush=True)
    rows = []
    for label, code in (("a renamed copy of a stored run", renamed(codes[n // 2])), ("fresh code", program(rng))):
        run = Run.objects.create(experiment=Experiment.objects.get(), competition=competition, seed=-1)
        fingerprint_s, hashes = timed(lambda code=code: index.hashes_of([code]), repeat)
        fp = index.store(competition_id=competition.pk, hashes=hashes, run=run)
        with CaptureQueriesContext(connection) as queries:
            index.candidates(fp, hashes)
        index_s, found = timed(lambda fp=fp, hashes=hashes: index.candidates(fp, hashes), repeat)
        stored_s, brute = timed(lambda fp=fp, hashes=hashes: pairwise_stored(fp, hashes), max(1, repeat // 2))
        code_s, _ = timed(lambda code=code: pairwise_code(code, codes[:SAMPLE]), 1)
        assert {c.run: (c.shared, c.similarity) for c in found} == brute, "the index and pairwise disagree"
        best = max((c.similarity for c in found), default=0.0)
        rows.append({"n": n, "label": label, "hashes": len(hashes), "candidates": len(found), "best": best,
                     "queries": len(queries), "fingerprint_s": fingerprint_s, "index_s": index_s,
                     "stored_s": stored_s, "code_s": code_s * n / min(n, SAMPLE)})
        print(f"  {label}: index {index_s * 1e3:.1f} ms, pairwise {stored_s * 1e3:.1f} ms", flush=True)
        run.delete()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    rng = random.Random(0)
    sizes = [int(s) for s in args.sizes.split(",")]
    pool = Pool(max(sizes), rng)
    rows = []
    try:
        for n in sizes:
            rows += measure(n, args.repeat, pool, rng)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    report(rows)


def report(rows: list[dict]) -> None:
    print("\nper new run (best of the repeats); ratio = baseline time / index time")
    for r in rows:
        per = r["index_s"] / r["n"] * 1e6
        print(f"{r['n']:>7,} stored, {r['label']:31} {r['hashes']} hashes, {r['candidates']:,} runs share one "
              f"(best {r['best']:.2f}), {r['queries']} queries\n"
              f"    index {r['index_s'] * 1e3:8.1f} ms ({per:.2f} us per stored run) | pairwise, stored fingerprints "
              f"{r['stored_s'] * 1e3:8.1f} ms = {r['stored_s'] / r['index_s']:5.1f}x | pairwise, from code "
              f"{r['code_s']:6.1f} s = {r['code_s'] / r['index_s']:,.0f}x (scaled from {SAMPLE}) | fingerprinting the "
              f"new code {r['fingerprint_s'] * 1e3:.1f} ms")
    if len({r["n"] for r in rows}) > 1:
        small, large = min(r["n"] for r in rows), max(r["n"] for r in rows)
        for label in dict.fromkeys(r["label"] for r in rows):
            a = next(r for r in rows if r["n"] == small and r["label"] == label)
            b = next(r for r in rows if r["n"] == large and r["label"] == label)
            print(f"growth {small:,} -> {large:,} stored runs, {label}: index {b['index_s'] / a['index_s']:.1f}x, "
                  f"pairwise {b['stored_s'] / a['stored_s']:.1f}x")
    print("median index time:", f"{statistics.median(r['index_s'] for r in rows) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()

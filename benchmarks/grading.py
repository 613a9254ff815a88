"""Time grade_submission against the floor: pandas.read_csv of both files + the sklearn metric.

A script, not a test:  DEBUG=true .venv/bin/python benchmarks/grading.py [--rows N] [--repeat R]
Builds synthetic 1,000,000-row answers and submissions in a temp dir for an AUC competition
(aerial-cactus-identification, string ids) and an RMSE one (denoising-dirty-documents), in the
answers' row order and shuffled, and prints the best-of-R times and their ratio (target <= 1.5x).

The baseline never matches ids, so on a shuffled submission it is fast and wrong; grade_submission
pays for one hash lookup of the ids there (an array comparison when the orders agree), plus validation.
A second baseline does what MLE-bench's graders do for these competitions (read both, sort both by id,
then the metric), so the shuffled case is also compared with something that gets it right.
"cold" is the first grading of a competition in a worker (answers read and indexed), "warm" a later
one (leaderboard.grading.answers_cache keeps the parsed, indexed answers; only the submission is read).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
os.environ.setdefault("DATABASE_URL", "sqlite:///:memory:")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from sklearn import metrics as sk  # noqa: E402

from leaderboard.grading import answers_cache, grade_submission  # noqa: E402
from leaderboard.models import Benchmark, Competition  # noqa: E402

CASES = {
    "aerial-cactus-identification": ("id", "has_cactus", sk.roc_auc_score),
    "denoising-dirty-documents": ("id", "value", sk.root_mean_squared_error),
}


def build(folder: Path, slug: str, rows: int, shuffle: bool) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    id_col, target, _ = CASES[slug]
    if slug.startswith("aerial"):
        ids = pd.Series(rng.integers(0, 2**63, rows)).map("{:032x}.jpg".format)
        y = rng.integers(0, 2, rows)
        pred = np.clip(0.3 * y + 0.7 * rng.random(rows), 0, 1)
    else:
        ids = pd.Series(np.arange(rows)).map(lambda k: f"{k // 250000 + 1}_{k // 500 % 500 + 1}_{k % 500 + 1}")
        y = rng.random(rows)
        pred = np.clip(y + rng.normal(0, 0.1, rows), 0, 1)
    answers, submission = folder / f"{slug}-answers.csv", folder / f"{slug}-{shuffle}-sub.csv"
    pd.DataFrame({id_col: ids, target: y}).to_csv(answers, index=False)
    sub = pd.DataFrame({id_col: ids, target: pred})
    (sub.sample(frac=1, random_state=1) if shuffle else sub).to_csv(submission, index=False)
    return answers, submission


def _timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def best_of(repeat: int, *fns) -> tuple[list[float], object]:
    """Best of `repeat` for each function, alternating so that load on a shared machine hits all alike."""
    times: list[list[float]] = [[] for _ in fns]
    result = None
    for _ in range(repeat):
        for spent, fn in zip(times, fns, strict=True):
            elapsed, result = _timed(fn)
            spent.append(elapsed)
    return [min(spent) for spent in times], result


def baseline(slug: str, answers: Path, submission: Path) -> float:
    _, target, metric = CASES[slug]
    return metric(pd.read_csv(answers)[target], pd.read_csv(submission)[target])


def sorted_baseline(slug: str, answers: Path, submission: Path) -> float:
    id_col, target, metric = CASES[slug]
    ans, sub = pd.read_csv(answers).sort_values(id_col), pd.read_csv(submission).sort_values(id_col)
    return metric(ans[target], sub[target])


def cold(competition: Competition, answers: Path, submission: Path):
    answers_cache.clear()  # the first grading of a competition in a worker process
    return grade_submission(competition, submission, answers)


def measure(competition: Competition, answers: Path, submission: Path, repeat: int, order: str) -> None:
    slug = competition.slug
    (t_base, t_sorted, t_cold), report = best_of(
        repeat, lambda: baseline(slug, answers, submission), lambda: sorted_baseline(slug, answers, submission),
        lambda: cold(competition, answers, submission))
    (t_warm,), _ = best_of(repeat, lambda: grade_submission(competition, submission, answers))
    print(f"{slug:30s} {order:10s} read_csv+metric {t_base:6.3f}s  read+sort+metric {t_sorted:6.3f}s  "
          f"grade cold {t_cold:6.3f}s ({t_cold / t_base:4.2f}x)  warm {t_warm:6.3f}s ({t_warm / t_base:4.2f}x)  "
          f"cold vs sorted {t_cold / t_sorted:4.2f}x  score {report.score} (valid={report.valid_submission}, "
          f"error={report.error})", flush=True)


RESPELLED = "rsna-miccai-brain-tumor-radiogenomic-classification"


def measure_respelled_ids(folder: Path, benchmark: Benchmark, rows: int, repeat: int) -> None:
    """Zero-padded integer ids in the answers ("00000012"), plain integers in a shuffled submission (what
    read_csv + to_csv of the sample writes): no id matches as text, so grade_submission types both id columns
    as pandas does and matches again. Against MLE-bench's way: read_csv (which types them), sort, metric."""
    rng = np.random.default_rng(2)
    ids, y = rng.permutation(10 * rows)[:rows], rng.integers(0, 2, rows)
    answers, submission = folder / "respelled-answers.csv", folder / "respelled-sub.csv"
    pd.DataFrame({"BraTS21ID": [f"{i:08d}" for i in ids], "MGMT_value": y}).to_csv(answers, index=False)
    sub = pd.DataFrame({"BraTS21ID": ids, "MGMT_value": np.clip(0.3 * y + 0.7 * rng.random(rows), 0, 1)})
    sub.sample(frac=1, random_state=1).to_csv(submission, index=False)
    competition = Competition.objects.get_or_create(slug=RESPELLED, defaults={"benchmark": benchmark})[0]

    def mle_bench_way():
        a = pd.read_csv(answers).sort_values("BraTS21ID")
        s = pd.read_csv(submission).sort_values("BraTS21ID")
        return sk.roc_auc_score(a["MGMT_value"], s["MGMT_value"])

    (t_sorted, t_cold), report = best_of(repeat, mle_bench_way, lambda: cold(competition, answers, submission))
    print(f"{'respelled ids (rsna-miccai)':30s} shuffled   read+sort+metric {t_sorted:6.3f}s  grade cold "
          f"{t_cold:6.3f}s ({t_cold / t_sorted:4.2f}x)  score {report.score} (valid={report.valid_submission}, "
          f"error={report.error})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    benchmark = Benchmark.objects.get_or_create(slug="mle-bench", defaults={"name": "MLE-bench"})[0]
    print(f"{args.rows:,} rows, best of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        for slug in CASES:
            competition = Competition.objects.get_or_create(slug=slug, defaults={"benchmark": benchmark})[0]
            for shuffle in (False, True):
                answers, submission = build(Path(tmp), slug, args.rows, shuffle)
                measure(competition, answers, submission, args.repeat, "shuffled" if shuffle else "same order")
        measure_respelled_ids(Path(tmp), benchmark, args.rows, args.repeat)


if __name__ == "__main__":
    main()

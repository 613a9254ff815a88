"""Helpers shared by the grading test modules: synthetic files on disk, sorted views, one grade call."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from leaderboard.grading import grade_submission
from leaderboard.models import Competition


def sorted_by(id_col: str):
    """Answers and submission both sorted by id, as MLE-bench's graders align them."""
    return lambda ans, sub: (ans.sort_values(id_col, kind="stable"), sub.sort_values(id_col, kind="stable"))


def labels_case(id_col: str, target: str, ids, values, score, n: int):
    """Single-label classification: answers id + target, a submission right about 60% of the time,
    and the expected score of the id-sorted columns (as lists) by an independent `score`."""
    def build(rng):
        y = rng.choice(values, n)
        ans = pd.DataFrame({id_col: ids(rng), target: y})
        guess = np.where(rng.random(n) < 0.6, y, rng.choice(values, n))
        return ans, pd.DataFrame({id_col: ans[id_col], target: guess})

    def expect(ans, sub):
        a, s = sorted_by(id_col)(ans, sub)
        return score(a[target].tolist(), s[target].tolist())

    return build, expect


def with_human_leaderboard(slugs) -> list[str]:
    """The competitions whose catalogue folder has Kaggle's leaderboard (some of MLE-bench's have none)."""
    from tests.conftest import CATALOGUE_DIR

    return [slug for slug in slugs if (CATALOGUE_DIR / "competitions" / slug / "leaderboard.csv").is_file()]


def assert_direction_matches_humans(competition: Competition, lower_is_better: bool) -> None:
    """A grader's direction agrees with its Kaggle leaderboard's (known for every graded one)."""
    assert competition.is_lower_better is not None
    assert lower_is_better == competition.is_lower_better


def write_files(tmp_path: Path, ans: pd.DataFrame, sub: pd.DataFrame, rng=None) -> tuple[Path, Path]:
    """answers.csv and submission.csv in tmp_path; the submission's rows shuffled when rng is given."""
    answers, submission = tmp_path / "answers.csv", tmp_path / "submission.csv"
    ans.to_csv(answers, index=False)
    (sub if rng is None else sub.iloc[rng.permutation(len(sub))]).to_csv(submission, index=False)
    return answers, submission


def build_case(cases: dict, slug: str):
    """(answers, submission, expect, rng) for a competition's case, reproducible per slug."""
    rng = np.random.default_rng(zlib.crc32(slug.encode()))
    build, expect = cases[slug]
    ans, sub = build(rng)
    return ans, sub, expect, rng


def grade(slug: str, submission: Path, answers: Path):
    return grade_submission(Competition.objects.get(slug=slug), submission, answers_path=answers)


def edit_distance(a, b) -> int:
    """Textbook dynamic programme over the whole table, independent of the grader's bit-parallel one."""
    table = np.zeros((len(a) + 1, len(b) + 1), dtype=int)
    table[:, 0], table[0, :] = np.arange(len(a) + 1), np.arange(len(b) + 1)
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i, j] = min(table[i - 1, j] + 1, table[i, j - 1] + 1, table[i - 1, j - 1] + (a[i - 1] != b[j - 1]))
    return int(table[-1, -1])

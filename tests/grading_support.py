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
    return lambda ans, sub: (ans.sort_values(id_col), sub.sort_values(id_col))


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

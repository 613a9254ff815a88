"""Rows MLE-bench scores only in part: keep masks on the answers (ventilator's u_out, stanford-covid's keep)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn import metrics as sk

from tests.grading_support import grade, write_files


def _ventilator(rng, n=400):
    ans = pd.DataFrame({"id": rng.permutation(np.arange(1, n + 1)), "pressure": rng.normal(15, 5, n),
                        "u_out": rng.integers(0, 2, n), "breath_id": 1, "R": 20, "C": 50, "time_step": 0.1,
                        "u_in": 3.0})
    sub = pd.DataFrame({"id": ans["id"], "pressure": ans["pressure"] + rng.normal(0, 1, n)})
    sub.loc[ans["u_out"] == 1, "pressure"] = 1e6  # way off where nothing is scored
    return ans, sub


def test_ventilator_scores_only_the_inspiratory_rows(catalogue, tmp_path):
    rng = np.random.default_rng(7)
    ans, sub = _ventilator(rng)
    answers, submission = write_files(tmp_path, ans, sub, rng)
    report = grade("ventilator-pressure-prediction", submission, answers)
    # grade.py: sort by id, keep answers rows with u_out == 0, the submission rows with those ids, MAE
    kept = ans[ans["u_out"] == 0].sort_values("id")
    guess = sub[sub["id"].isin(kept["id"])].sort_values("id")
    assert report.valid_submission
    assert report.score == round(sk.mean_absolute_error(kept["pressure"], guess["pressure"]), 5)
    assert report.score < 2


def test_ventilator_still_needs_every_id(catalogue, tmp_path):
    rng = np.random.default_rng(8)
    ans, sub = _ventilator(rng)
    unscored = sub[ans["u_out"] == 1].index[0]
    answers, submission = write_files(tmp_path, ans, sub.drop(index=unscored))
    report = grade("ventilator-pressure-prediction", submission, answers)
    assert not report.valid_submission and "missing" in report.error

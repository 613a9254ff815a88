"""Metric variants: the exact final number MLE-bench computes (its MAP@5 tokenisation for whale, the rounded
MAE of volcanic eruptions)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn import metrics as sk

from tests.grading_support import grade, write_files


def _mle_bench_ap5(truth: str, prediction: str) -> float:
    """mlebench.metrics.average_precision_at_k on str.split(' '), written out independently."""
    guesses, hits, total = prediction.split(" ")[:5], 0, 0.0
    for i, guess in enumerate(guesses):
        if guess in {truth} and guess not in guesses[:i]:
            hits += 1
            total += hits / (i + 1)
    return total


def test_whale_uses_mle_bench_map_at_5(catalogue, tmp_path):
    predictions = [
        "w_2 w_2 w_1 new_whale w_3",  # a repeat uses up rank 2: hit at rank 3
        "w_9  w_1 w_3 w_4",  # a double space makes an empty guess at rank 2: hit at rank 3
        "w_5 w_6 w_7 w_8 w_9 w_1",  # the sixth token never counts
        "w_1",
    ]
    ans = pd.DataFrame({"Image": [f"{k}.jpg" for k in range(4)], "Id": "w_1"})
    sub = pd.DataFrame({"Image": ans["Image"], "Id": predictions})
    report = grade("whale-categorization-playground", *reversed(write_files(tmp_path, ans, sub)))
    expected = np.mean([_mle_bench_ap5("w_1", p) for p in predictions])
    assert expected == (1 / 3 + 1 / 3 + 0 + 1) / 4
    assert report.score == round(expected, 5)


def test_volcanic_eruptions_reports_the_rounded_mae(catalogue, tmp_path):
    rng = np.random.default_rng(5)
    ans = pd.DataFrame({"segment_id": rng.permutation(10**6)[:200], "time_to_eruption": rng.integers(0, 5e7, 200)})
    sub = pd.DataFrame({"segment_id": ans["segment_id"],
                        "time_to_eruption": ans["time_to_eruption"] + rng.normal(0, 1e6, 200)})
    report = grade("predict-volcanic-eruptions-ingv-oe", *reversed(write_files(tmp_path, ans, sub, rng)))
    merged = ans.merge(sub, on="segment_id", suffixes=("_true", "_pred"))  # grade.py's merge, then int(round())
    mae = sk.mean_absolute_error(merged["time_to_eruption_true"], merged["time_to_eruption_pred"])
    assert mae != int(round(mae))
    assert report.score == int(round(mae))

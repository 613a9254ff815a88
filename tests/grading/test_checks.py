"""Range and shape checks MLE-bench makes: a file it calls invalid is invalid here, and the message says
which check failed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as sk

from tests.grading_support import grade, write_files


def _petfinder(values):
    ids = [f"{k:032x}" for k in range(len(values))]
    ans = pd.DataFrame({"Id": ids, "Pawpularity": np.linspace(1, 100, len(values)).round()})
    return ans, pd.DataFrame({"Id": ids, "Pawpularity": values})


@pytest.mark.parametrize("bad", [0.0, 0.999, 100.5, -3.0])
def test_petfinder_rejects_a_prediction_outside_1_to_100(catalogue, tmp_path, bad):
    ans, sub = _petfinder([50.0, bad, 20.0])
    report = grade("petfinder-pawpularity-score", *reversed(write_files(tmp_path, ans, sub)))
    assert not report.valid_submission
    assert "'Pawpularity' has 1 value(s) outside [1, 100]" in report.error and "row 2" in report.error


def test_petfinder_accepts_the_bounds(catalogue, tmp_path):
    ans, sub = _petfinder([1.0, 100.0, 37.5])
    report = grade("petfinder-pawpularity-score", *reversed(write_files(tmp_path, ans, sub)))
    assert report.score == round(sk.root_mean_squared_error(ans["Pawpularity"], sub["Pawpularity"]), 5)


def _whale(extra: dict):
    ans = pd.DataFrame({"Image": ["a.jpg", "b.jpg"], "Id": ["w_1", "new_whale"]})
    sub = pd.DataFrame({"Image": ["a.jpg", "b.jpg"], "Id": ["w_1 new_whale", "new_whale w_1"], **extra})
    return ans, sub


def test_whale_requires_exactly_image_and_id(catalogue, tmp_path):
    ans, sub = _whale({"confidence": [0.9, 0.1]})
    report = grade("whale-categorization-playground", *reversed(write_files(tmp_path, ans, sub)))
    assert not report.valid_submission
    assert "unexpected column(s) 'confidence'" in report.error and "accepts only 'Image'" in report.error
    ans, sub = _whale({})
    assert grade("whale-categorization-playground", *reversed(write_files(tmp_path, ans, sub))).score == 1.0

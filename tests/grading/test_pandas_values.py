"""Values read the way pandas reads them, as MLE-bench does: zero-padded integer ids, booleans spelled any way
pandas accepts, numbers written as floats. A file whose values differ only in spelling is never all-wrong."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as sk

from leaderboard.grading import pandas_values
from tests.grading_support import grade

COLUMNS = [
    ["00012", "7", "+3"], [" 12", "7 "], ["1.0", "2"], ["1e3", "2.5"], ["true", "False", "TRUE"], ["1", "0"],
    ["True", "1"], ["yes", "no"], ["12", "NA"], ["True", ""], ["0x10", "1"], ["1_000", "2"], ["-inf", "3"],
]


@pytest.mark.parametrize("cells", COLUMNS)
def test_typed_values_are_what_read_csv_makes_of_the_column(cells):
    read = pd.read_csv(io.StringIO("c,d\n" + "".join(f"{cell},x\n" for cell in cells)))["c"]
    typed = pandas_values.typed(np.array(cells, dtype=object))
    assert len(typed) == len(read)
    for ours, theirs in zip(typed, read.tolist(), strict=True):
        if pd.isna(theirs):
            assert pd.isna(ours)
        else:  # the same value, and text only where pandas kept text
            assert ours == theirs and isinstance(ours, str) == isinstance(theirs, str)


def _write(path, header, rows):
    path.write_text(header + "\n" + "".join(",".join(map(str, row)) + "\n" for row in rows))
    return path


def test_zero_padded_ids_match_their_integer_spelling(catalogue, tmp_path):
    ids = [f"{k:05d}" for k in (12, 3, 250, 9, 41, 100)]
    y = [1, 0, 1, 0, 0, 1]
    p = [0.9, 0.2, 0.4, 0.5, 0.1, 0.7]
    answers = _write(tmp_path / "a.csv", "BraTS21ID,MGMT_value", zip(ids, y, strict=True))
    # what read_csv + to_csv of the sample submission writes: the ids as integers, in another order
    submission = _write(tmp_path / "s.csv", "BraTS21ID,MGMT_value",
                        reversed(list(zip([int(i) for i in ids], p, strict=True))))
    report = grade("rsna-miccai-brain-tumor-radiogenomic-classification", submission, answers)
    assert report.valid_submission, report.error
    assert report.score == round(sk.roc_auc_score(y, p), 5)
    assert any("'BraTS21ID' values are not spelled as in the answers, but pandas reads both columns as the same int"
               in note for note in report.notes)


def test_integer_ids_that_differ_in_value_are_still_rejected(catalogue, tmp_path):
    answers = _write(tmp_path / "a.csv", "BraTS21ID,MGMT_value", [("00012", 1), ("00003", 0)])
    submission = _write(tmp_path / "s.csv", "BraTS21ID,MGMT_value", [("12", 0.5), ("4", 0.5)])
    report = grade("rsna-miccai-brain-tumor-radiogenomic-classification", submission, answers)
    assert not report.valid_submission and "'4'" in report.error


TRUTH = [True, False, True, True, False, False, True, False]


@pytest.mark.parametrize("spell", [
    lambda b: "True" if b else "False", lambda b: "true" if b else "false", lambda b: "TRUE" if b else "FALSE",
    lambda b: "1" if b else "0", lambda b: "1.0" if b else "0.0",
], ids=["True", "true", "TRUE", "1", "1.0"])
def test_spaceship_booleans_in_any_pandas_spelling(catalogue, tmp_path, spell):
    ids = [f"{k:04d}_01" for k in range(len(TRUTH))]
    guess = TRUTH[:6] + [not b for b in TRUTH[6:]]  # 6 of 8 right
    answers = _write(tmp_path / "a.csv", "PassengerId,Transported", zip(ids, TRUTH, strict=True))
    submission = _write(tmp_path / "s.csv", "PassengerId,Transported", zip(ids, map(spell, guess), strict=True))
    report = grade("spaceship-titanic", submission, answers)
    assert report.score == sk.accuracy_score(TRUTH, guess) == 0.75


def test_spaceship_text_pandas_does_not_read_as_booleans_is_wrong_like_mle_bench(catalogue, tmp_path):
    ids = [f"{k:04d}_01" for k in range(len(TRUTH))]
    answers = _write(tmp_path / "a.csv", "PassengerId,Transported", zip(ids, TRUTH, strict=True))
    submission = _write(tmp_path / "s.csv", "PassengerId,Transported",
                        zip(ids, ["yes" if b else "no" for b in TRUTH], strict=True))
    report = grade("spaceship-titanic", submission, answers)
    assert report.score == 0.0  # MLE-bench: 'yes' is text, never equal to a bool


def test_labels_pandas_types_differently_in_the_two_files_compare_as_text(catalogue, tmp_path):
    ids = [f"{k:04d}_01" for k in range(4)]
    answers = _write(tmp_path / "a.csv", "PassengerId,Transported", zip(ids, ["True", "False", "maybe", "True"],
                                                                        strict=True))
    submission = _write(tmp_path / "s.csv", "PassengerId,Transported", zip(ids, ["True", "False", "True", "false"],
                                                                           strict=True))
    report = grade("spaceship-titanic", submission, answers)  # text vs bool: MLE-bench would find no row equal
    assert report.score == 0.5
    assert any("reads the submission's labels as bool but the answers' as text" in note for note in report.notes)

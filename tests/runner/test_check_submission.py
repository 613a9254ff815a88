"""check_submission.py, the format check agents run inside the sandbox: a JSON verdict and an exit code, from
the sample submission alone (no answers)."""

from __future__ import annotations

import pytest

from tests.agent_support import check

SAMPLE = "id,label,p\na1,x,0.5\na2,x,0.5\na3,x,0.5\n"


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "sample_submission.csv"
    path.write_text(SAMPLE)
    return path


def verdict_for(tmp_path, sample, text: str) -> tuple[int, dict]:
    path = tmp_path / "submission.csv"
    path.write_text(text)
    return check(path, sample)


def test_a_good_file_is_valid_in_any_row_order(tmp_path, sample):
    code, verdict = verdict_for(tmp_path, sample, "id,label,p\na3,y,0.1\na1,x,0.9\na2,z,1\n")
    assert code == 0 and verdict["valid"] and verdict["errors"] == []
    assert verdict["rows"] == verdict["expected_rows"] == 3


def test_wrong_columns(tmp_path, sample):
    code, verdict = verdict_for(tmp_path, sample, "id,label,prob\na1,x,0.5\na2,x,0.5\na3,x,0.5\n")
    assert code == 1 and not verdict["valid"]
    assert "missing columns: 'p'" in verdict["errors"][0] and "unexpected columns: 'prob'" in verdict["errors"][1]


def test_columns_in_another_order_are_only_a_warning(tmp_path, sample):
    code, verdict = verdict_for(tmp_path, sample, "label,id,p\nx,a1,0.5\nx,a2,0.5\nx,a3,0.5\n")
    assert code == 0 and verdict["valid"] and "order" in verdict["warnings"][0]


def test_missing_and_unknown_ids(tmp_path, sample):
    code, verdict = verdict_for(tmp_path, sample, "id,label,p\na1,x,0.5\na2,x,0.5\nzz,x,0.5\n")
    assert code == 1
    assert any("1 id values of the sample submission are missing: 'a3'" in e for e in verdict["errors"])
    assert any("not in the sample submission: 'zz'" in e for e in verdict["errors"])


def test_duplicated_ids_and_row_count(tmp_path, sample):
    code, verdict = verdict_for(tmp_path, sample, "id,label,p\na1,x,0.5\na2,x,0.5\na3,x,0.5\na3,y,0.4\n")
    assert code == 1
    assert "4 rows, the sample submission has 3" in verdict["errors"]
    assert any("1 repeated id values: 'a3'" in e for e in verdict["errors"])


@pytest.mark.parametrize("cell", ["", "nan", "NaN"])
def test_empty_and_nan_cells(tmp_path, sample, cell):
    code, verdict = verdict_for(tmp_path, sample, f"id,label,p\na1,x,0.5\na2,x,{cell}\na3,x,0.5\n")
    assert code == 1 and verdict["errors"] == ["column 'p' has 1 empty or NaN cells (lines 3)"]


def test_a_number_column_holding_text_is_warned_about(tmp_path, sample):
    code, verdict = verdict_for(tmp_path, sample, "id,label,p\na1,x,high\na2,x,0.5\na3,x,0.5\n")
    assert code == 0 and "non-numbers" in verdict["warnings"][0]


def test_no_file_and_no_sample(tmp_path, sample):
    code, verdict = check(tmp_path / "absent.csv", sample)
    assert code == 1 and "no submission file" in verdict["errors"][0]
    code, verdict = check(tmp_path / "absent.csv", tmp_path / "no-sample.csv")
    assert code == 2 and "cannot read the sample submission" in verdict["errors"][0]

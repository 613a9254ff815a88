#!/usr/bin/env python3
"""Check a submission's FORMAT against the competition's sample submission; never sees any answers.

Usage (inside a sandbox, where DATA_DIR and SUBMISSION_DIR are set):

    python check_submission.py [SUBMISSION] [--sample SAMPLE]

SUBMISSION defaults to $SUBMISSION_DIR/submission.csv and SAMPLE to $DATA_DIR/sample_submission.csv.
The checks: the same columns as the sample (order only warned about), exactly the sample's ids (the
first column), each once, the same number of rows, and no empty or NaN cells. Prints one JSON object
({"valid": ..., "errors": [...], "warnings": [...], ...}) and exits 0 when valid, 1 when invalid and
2 when the sample submission itself cannot be read.

Standard library only (csv, json), so it runs on any Python 3.8+ with nothing installed.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys

MISSING = {"", "nan", "NaN", "NAN"}
SHOWN = 5  # how many offending ids/rows a message lists


class CheckError(Exception):
    """The sample submission is unusable: the check itself cannot run."""


def read_rows(path: str) -> tuple[list[str], list[list[str]]]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            return [], []
        return header, [row for row in reader if row]


def _sample(values) -> str:
    values = list(values)
    shown = ", ".join(repr(v) for v in values[:SHOWN])
    return shown + (f" ... ({len(values)} in all)" if len(values) > SHOWN else "")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_columns(header: list[str], expected: list[str], errors: list[str], warnings: list[str]) -> None:
    if len(set(header)) != len(header):
        repeated = sorted({c for c in header if header.count(c) > 1})
        errors.append(f"repeated column names: {_sample(repeated)}")
    missing = [c for c in expected if c not in header]
    extra = [c for c in header if c not in expected]
    if missing:
        errors.append(f"missing columns: {_sample(missing)}")
    if extra:
        errors.append(f"unexpected columns: {_sample(extra)}")
    if not missing and not extra and header != expected:
        warnings.append("columns are not in the sample submission's order: " + ", ".join(expected))


def check_rows(header: list[str], rows: list[list[str]], errors: list[str]) -> None:
    short = [n for n, row in enumerate(rows, start=2) if len(row) != len(header)]
    if short:
        errors.append(f"rows whose number of fields differs from the header's {len(header)} (line numbers): "
                      f"{_sample(short)}")
    empty = {}
    for line, row in enumerate(rows, start=2):
        for column, cell in zip(header, row):  # noqa: B905 - short rows are reported above; Python 3.8+
            if cell.strip() in MISSING:
                empty.setdefault(column, []).append(line)
    for column, lines in empty.items():
        errors.append(f"column {column!r} has {len(lines)} empty or NaN cells (lines {_sample(lines)})")


def check_ids(ids: list[str], expected_ids: list[str], id_column: str, errors: list[str]) -> None:
    seen, repeated = set(), []
    for value in ids:
        if value in seen:
            repeated.append(value)
        seen.add(value)
    if repeated:
        errors.append(f"{len(repeated)} repeated {id_column} values: {_sample(repeated)}")
    expected = set(expected_ids)
    missing = [i for i in expected_ids if i not in seen]
    extra = [i for i in dict.fromkeys(ids) if i not in expected]
    if missing:
        errors.append(f"{len(missing)} {id_column} values of the sample submission are missing: {_sample(missing)}")
    if extra:
        errors.append(f"{len(extra)} {id_column} values are not in the sample submission: {_sample(extra)}")


def check_number_columns(header: list[str], rows: list[list[str]], sample_header: list[str],
                         sample_rows: list[list[str]], warnings: list[str]) -> None:
    """A column the sample fills with numbers most likely wants numbers: a hint, not a verdict."""
    for position, column in enumerate(sample_header[1:], start=1):
        cells = [row[position] for row in sample_rows if len(row) > position]
        if not cells or not all(_is_number(c) for c in cells) or column not in header:
            continue
        at = header.index(column)
        bad = [row[at] for row in rows if len(row) > at and row[at].strip() not in MISSING and not _is_number(row[at])]
        if bad:
            warnings.append(f"column {column!r}: the sample holds numbers, the submission has {len(bad)} "
                            f"non-numbers, e.g. {_sample(bad)}")


def check(submission: str, sample: str) -> dict:
    try:
        sample_header, sample_rows = read_rows(sample)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CheckError(f"cannot read the sample submission {sample}: {exc}") from None
    if not sample_header:
        raise CheckError(f"the sample submission {sample} is empty")
    verdict = {"submission": submission, "expected_rows": len(sample_rows), "expected_columns": sample_header}
    errors, warnings = [], []
    try:
        header, rows = read_rows(submission)
    except FileNotFoundError:
        errors.append(f"no submission file at {submission}")
        header, rows = [], []
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        errors.append(f"cannot read the submission as UTF-8 CSV: {exc}")
        header, rows = [], []
    if header or not errors:
        _check_content(header, rows, sample_header, sample_rows, errors, warnings)
    verdict.update(valid=not errors, rows=len(rows), columns=header, errors=errors, warnings=warnings)
    return verdict


def _check_content(header: list[str], rows: list[list[str]], sample_header: list[str], sample_rows: list[list[str]],
                   errors: list[str], warnings: list[str]) -> None:
    if not header:
        errors.append("the submission is empty (no header)")
        return
    check_columns(header, sample_header, errors, warnings)
    if len(rows) != len(sample_rows):
        errors.append(f"{len(rows)} rows, the sample submission has {len(sample_rows)}")
    check_rows(header, rows, errors)
    id_column = sample_header[0]
    if id_column in header:
        at = header.index(id_column)
        ids = [row[at] if len(row) > at else "" for row in rows]
        check_ids(ids, [row[0] for row in sample_rows if row], id_column, errors)
    check_number_columns(header, rows, sample_header, sample_rows, warnings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("submission", nargs="?",
                        default=os.path.join(os.environ.get("SUBMISSION_DIR", "."), "submission.csv"))
    parser.add_argument("--sample", default=os.path.join(os.environ.get("DATA_DIR", "."), "sample_submission.csv"))
    args = parser.parse_args(argv)
    try:
        verdict = check(args.submission, args.sample)
    except CheckError as exc:
        print(json.dumps({"valid": False, "errors": [str(exc)], "warnings": []}))
        return 2
    print(json.dumps(verdict))
    return 0 if verdict["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""Reading CSVs fast (pandas C engine with dtype hints) and turning every reading failure of a
submission into a SubmissionError that names the problem."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd

from .validation import NA_STRINGS, SubmissionError, diagnose_non_numeric

SNIFF_BYTES = 64 * 1024
MAGIC = {
    b"PK\x03\x04": "a ZIP archive (or an Excel .xlsx file)",
    b"\x1f\x8b": "a gzip-compressed file",
    b"%PDF": "a PDF document",
    b"\xd0\xcf\x11\xe0": "an old Excel/Office file",
    b"\x89PNG": "a PNG image",
}


def _sniff(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise SubmissionError(f"the submission could not be read ({exc.strerror or exc.__class__.__name__})") from None
    if not head.strip():
        raise SubmissionError("the submission file is empty")
    return head


def _check_text(head: bytes) -> None:
    for magic, what in MAGIC.items():
        if head.startswith(magic):
            raise SubmissionError(f"the submission is {what}, not a CSV file")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SubmissionError("the submission is UTF-16 text; save it as UTF-8 CSV")
    if b"\x00" in head:
        raise SubmissionError("the submission is binary data (it contains NUL bytes), not a CSV file")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # a multi-byte character cut by the sniff window is fine
            raise SubmissionError(_encoding_message(head, exc.start)) from None


def _encoding_message(data: bytes, offset: int) -> str:
    line = data[:offset].count(b"\n") + 1
    return (f"the submission is not UTF-8 text: byte 0x{data[offset]:02x} at offset {offset} (line {line}) "
            "is invalid; save the file as UTF-8")


def read_header(path: Path) -> list[str]:
    head = _sniff(path)
    _check_text(head)
    first_line = head.decode("utf-8", errors="replace").lstrip("\ufeff").splitlines()[0]
    if not first_line.strip():
        raise SubmissionError("the first line is empty: the header (column names) must be the first line")
    header = next(csv.reader(io.StringIO(first_line)), [])
    if len(header) == 1:
        for separator in (";", "\t", "|"):
            if separator in header[0]:
                raise SubmissionError(f"the header {header[0][:60]!r} has one column: the file seems to use "
                                      f"{separator!r} as separator; use commas")
    return header


def read_frame(path: Path, id_column: str, numeric: list[str], text: list[str], every_column: bool) -> pd.DataFrame:
    """Read id + value columns; numeric ones as float64, the id and text ones as str (no NaN).

    `every_column` parses all columns (submissions), so a row with too many fields is an error, as
    it is for MLE-bench's plain read_csv; with usecols pandas would silently drop the surplus.
    """
    dtypes = {id_column: object, **{c: "float64" for c in numeric}, **{c: object for c in text}}
    try:
        return _read(path, dtypes, {c: NA_STRINGS for c in numeric}, every_column)
    except ValueError as exc:
        if isinstance(exc, UnicodeDecodeError):
            raise SubmissionError(f"the submission is not UTF-8 text (invalid byte 0x{exc.object[exc.start]:02x} "
                                  "after the first 64 KiB); save the file as UTF-8") from None
        if isinstance(exc, pd.errors.ParserError):
            raise SubmissionError(f"malformed CSV: {_parser_message(exc)}") from None
        # A typed column failed to convert: read it as text to say which cells are at fault.
        raw = _read(path, {c: object for c in dtypes}, {}, every_column)
        diagnose_non_numeric(raw, numeric)
        raise SubmissionError(f"the submission could not be parsed ({exc})") from None


def _read(path: Path, dtypes: dict, na_values: dict, every_column: bool) -> pd.DataFrame:
    return pd.read_csv(path, usecols=None if every_column else list(dtypes), dtype=dtypes, engine="c", encoding="utf-8",
                       keep_default_na=False, na_values=na_values, skip_blank_lines=True)


def _parser_message(exc: Exception) -> str:
    return str(exc).replace("Error tokenizing data. C error: ", "").strip()

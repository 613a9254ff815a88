"""Answers files that do not hold one row per submission row (MLE-bench's JSON lines, one row per box),
turned into the frame the engine aligns: the submission's id column and the target columns, as text.

A spec names its layout (GraderSpec.answers_layout); the engine reads the answers through it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd


def _span(answer: dict) -> str:
    return f"{int(answer['start_token'])}:{int(answer['end_token'])}"


def natural_questions(path: Path) -> pd.DataFrame:
    """TensorFlow 2.0 QA's test.jsonl -> rows '<example_id>_long' and '<example_id>_short', each with its
    acceptable answers ('start:end' spans, YES or NO) separated by spaces; empty when there is none."""
    rows = []
    with path.open(encoding="utf-8") as lines:
        for line in filter(str.strip, lines):
            sample = json.loads(line)
            annotation = sample["annotations"][0]
            long = annotation["long_answer"]
            short = [_span(answer) for answer in annotation["short_answers"]]
            if annotation["yes_no_answer"] != "NONE":
                short.append(annotation["yes_no_answer"])
            rows.append((f"{sample['example_id']}_long", _span(long) if int(long["start_token"]) != -1 else ""))
            rows.append((f"{sample['example_id']}_short", " ".join(short)))
    return pd.DataFrame(rows, columns=["example_id", "answers"], dtype=object)


def boxes_per_image(path: Path) -> pd.DataFrame:
    """VinBigData's answers.csv, one row per box -> one row per image_id (first-appearance order) with its
    boxes 'class_id x_min y_min x_max y_max ...' in file order."""
    rows = pd.read_csv(path, dtype=str, keep_default_na=False)
    fields = rows[["class_id", "x_min", "y_min", "x_max", "y_max"]].agg(" ".join, axis=1)
    boxes = fields.groupby(rows["image_id"], sort=False).agg(" ".join)
    return pd.DataFrame({"image_id": boxes.index.to_numpy(dtype=object), "boxes": boxes.to_numpy(dtype=object)})


LAYOUTS: dict[str, Callable[[Path], pd.DataFrame]] = {
    "natural-questions-jsonl": natural_questions,
    "boxes-per-image": boxes_per_image,
}


def read(layout: str, path: Path) -> pd.DataFrame:
    return LAYOUTS[layout](path)

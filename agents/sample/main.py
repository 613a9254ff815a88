"""A sample agent: predicts each column of the sample submission from the training data alone.

`--strategy mode` fills each column with its most frequent value in train.csv (its mean, for a
numeric column); `--strategy copy-sample` submits the sample submission as it is. It writes its
steps to $LOGS_DIR/trajectory.jsonl in Medalboard's trajectory format, so the run page shows them.
"""

import argparse
import json
import os
import time
from pathlib import Path

import pandas as pd

DATA = Path("/home/data")
STARTED = time.monotonic()


def step(log, index: int, title: str, text: str) -> None:
    line = {"index": index, "kind": "message", "t": round(time.monotonic() - STARTED, 2), "title": title, "text": text}
    log.write(json.dumps(line) + "\n")
    log.flush()


def predict(sample: pd.DataFrame, train: pd.DataFrame | None, strategy: str) -> pd.DataFrame:
    submission = sample.copy()
    if strategy == "copy-sample" or train is None:
        return submission
    for column in sample.columns[1:]:
        if column not in train.columns:
            continue
        values = train[column].dropna()
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        submission[column] = values.mean() if numeric else values.mode().iloc[0]
    return submission


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=["mode", "copy-sample"], default="mode")
    args = parser.parse_args()
    logs = Path(os.environ["LOGS_DIR"])
    with open(logs / "trajectory.jsonl", "w") as log:
        header = {"format": "medalboard-trajectory", "version": 1, "task": os.environ.get("COMPETITION_ID", ""),
                  "agent": "sample"}
        log.write(json.dumps(header) + "\n")
        sample = pd.read_csv(DATA / "sample_submission.csv")
        train = pd.read_csv(DATA / "train.csv") if (DATA / "train.csv").is_file() else None
        step(log, 0, "read the data", f"sample: {sample.shape}, train: {None if train is None else train.shape}")
        submission = predict(sample, train, args.strategy)
        out = Path(os.environ["SUBMISSION_DIR"]) / "submission.csv"
        submission.to_csv(out, index=False)
        step(log, 1, f"wrote {out}", f"strategy {args.strategy}, {len(submission)} rows")


if __name__ == "__main__":
    main()

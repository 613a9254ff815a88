"""OSIC pulmonary fibrosis: the modified Laplace log likelihood of FVC predictions with a confidence."""

from __future__ import annotations

import numpy as np
import pandas as pd

SIGMA_FLOOR = 70.0
ERROR_CAP = 1000.0
LATEST_WEEKS = 3


def laplace_log_likelihood(actual: np.ndarray, predicted: np.ndarray, confidence: np.ndarray) -> float:
    """The mean of -sqrt(2) |error| / sigma - ln(sqrt(2) sigma), with sigma (the confidence) floored at
    70 and |error| capped at 1000: higher is better, at most about -4.6."""
    sigma = np.maximum(np.asarray(confidence, np.float64), SIGMA_FLOOR)
    error = np.minimum(np.abs(np.asarray(actual, np.float64) - np.asarray(predicted, np.float64)), ERROR_CAP)
    return float(np.mean(-np.sqrt(2) * error / sigma - np.log(np.sqrt(2) * sigma)))


def osic_latest_weeks(y_true: np.ndarray, y_pred: np.ndarray, patient_weeks: np.ndarray) -> float:
    """OSIC as MLE-bench scores it: only the answers' measured weeks (FVC present), and of those each
    patient's three latest; `y_pred` is (n, 2) FVC and Confidence, `patient_weeks` (n, 2) Patient and
    Patient_Week."""
    frame = pd.DataFrame({"patient": patient_weeks[:, 0], "fvc": np.asarray(y_true, np.float64),
                          "week": pd.Series(patient_weeks[:, 1], dtype=object).str.rsplit("_", n=1).str[-1]
                          .astype(int).to_numpy()})
    measured = frame[frame["fvc"].notna()]
    latest = measured.sort_values("week", kind="stable").groupby("patient").tail(LATEST_WEEKS).index.to_numpy()
    pred = np.asarray(y_pred, np.float64)[latest]
    return laplace_log_likelihood(frame["fvc"].to_numpy()[latest], pred[:, 0], pred[:, 1])

"""Mean angular error between directions given as (azimuth, zenith) in radians (IceCube)."""

from __future__ import annotations

import numpy as np


def _unit_vectors(directions: np.ndarray) -> np.ndarray:
    azimuth, zenith = directions[:, 0], directions[:, 1]
    return np.stack([np.sin(zenith) * np.cos(azimuth), np.sin(zenith) * np.sin(azimuth), np.cos(zenith)], axis=1)


def mean_angular_error(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """`y_true`, `y_pred`: (n, 2) arrays of azimuth, zenith; the mean great-circle angle between them."""
    cosine = np.sum(_unit_vectors(np.asarray(y_true, np.float64)) * _unit_vectors(np.asarray(y_pred, np.float64)),
                    axis=1)
    return float(np.mean(np.arccos(np.clip(cosine, -1.0, 1.0))))  # clip: rounding can leave |cos| > 1

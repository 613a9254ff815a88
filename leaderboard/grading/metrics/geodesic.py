"""Distances on the Earth: the Google Smartphone Decimeter Challenge 2022 score."""

from __future__ import annotations

import numpy as np

EARTH_RADIUS_M = 6_371_000  # the host notebook's haversine radius


def haversine_m(true_deg: np.ndarray, pred_deg: np.ndarray) -> np.ndarray:
    """Great-circle distance in metres between (latitude, longitude) rows given in degrees."""
    (lat1, lng1), (lat2, lng2) = np.deg2rad(np.asarray(true_deg, np.float64)).T, np.deg2rad(
        np.asarray(pred_deg, np.float64)).T
    a = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lng2 - lng1) / 2) ** 2
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(a))


def trip_haversine_p50_p95(y_true: np.ndarray, y_pred: np.ndarray, trips: np.ndarray) -> float:
    """Per trip the mean of the median and 95th percentile distance; then the mean over trips."""
    distances = haversine_m(y_true, y_pred)
    trips = np.asarray(trips, dtype=object)
    per_trip = [np.mean(np.quantile(distances[trips == trip], [0.5, 0.95])) for trip in dict.fromkeys(trips)]
    return float(np.mean(per_trip))

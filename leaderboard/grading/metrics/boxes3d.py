"""Lyft 3D object detection: mAP of 3-D boxes (centre, size, yaw) over IoU thresholds 0.5 to 0.95, as the
host's mAP_evaluation.py computes it per sample and MLE-bench averages it over samples.

A box's IoU is its ground rectangles' intersection area x the overlap of their heights, over the union
of the volumes. Only pairs whose ground circles touch are clipped (Sutherland-Hodgman on two
rectangles); the others are 0 without any geometry.
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import SubmissionError, from_answers

THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
FIELDS = 9  # confidence, centre x y z, width, length, height, yaw, class name


def parse_boxes(text: object) -> tuple[np.ndarray, np.ndarray]:
    """'score x y z width length height yaw class ...' (single spaces) -> (names, (n, 8) numbers)."""
    text = str(text)
    if not text.strip():
        return np.empty(0, dtype=str), np.empty((0, 8))
    tokens = text.split(" ")
    if len(tokens) % FIELDS:
        raise SubmissionError(f"prediction {text[:60]!r} has {len(tokens)} values: expected groups of {FIELDS}")
    groups = np.array(tokens, dtype=object).reshape(-1, FIELDS)
    try:
        numbers = groups[:, :8].astype(np.float64)
    except ValueError:
        raise SubmissionError(f"prediction {text[:60]!r} has a value that is not a number") from None
    if not np.isfinite(numbers).all() or (numbers[:, 4:7] <= 0).any():
        raise SubmissionError(f"prediction {text[:60]!r}: values must be finite and sizes positive")
    return groups[:, 8].astype(str), numbers


def ground_rectangles(boxes: np.ndarray) -> np.ndarray:
    """(n, 4, 2) corners, counter-clockwise, of the boxes' ground rectangles (length along the yaw)."""
    x, y, width, length, yaw = boxes[:, 1], boxes[:, 2], boxes[:, 4], boxes[:, 5], boxes[:, 7]
    along = np.stack([np.cos(yaw), np.sin(yaw)], axis=1) * (length / 2)[:, None]
    across = np.stack([-np.sin(yaw), np.cos(yaw)], axis=1) * (width / 2)[:, None]
    centre = np.stack([x, y], axis=1)
    return np.stack([centre + along - across, centre + along + across, centre - along + across,
                     centre - along - across], axis=1)


def _clip(polygon: list, a: tuple, b: tuple) -> list:
    """The part of a convex polygon on the left of the line a -> b."""
    def side(p):
        return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])

    kept = []
    for current, following in zip(polygon, polygon[1:] + polygon[:1], strict=True):
        s_current, s_following = side(current), side(following)
        if s_current >= 0:
            kept.append(current)
        if (s_current >= 0) != (s_following >= 0):
            t = s_current / (s_current - s_following)
            kept.append((current[0] + t * (following[0] - current[0]), current[1] + t * (following[1] - current[1])))
    return kept


def intersection_area(first: np.ndarray, second: np.ndarray) -> float:
    """Area shared by two convex counter-clockwise polygons ((k, 2) corners)."""
    polygon = [tuple(p) for p in first.tolist()]
    corners = [tuple(p) for p in second.tolist()]
    for a, b in zip(corners, corners[1:] + corners[:1], strict=True):
        polygon = _clip(polygon, a, b)
        if len(polygon) < 3:
            return 0.0
    twice = sum(p[0] * q[1] - q[0] * p[1] for p, q in zip(polygon, polygon[1:] + polygon[:1], strict=True))
    return abs(twice) / 2


def iou_3d(predicted: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """(n, m) IoU of predicted and true boxes ((k, 8) numbers as parse_boxes gives them)."""
    ious = np.zeros((len(predicted), len(truth)))
    if not len(predicted) or not len(truth):
        return ious
    rect_p, rect_t = ground_rectangles(predicted), ground_rectangles(truth)
    half_z_p, half_z_t = predicted[:, 6] / 2, truth[:, 6] / 2
    heights = np.minimum(predicted[:, None, 3] + half_z_p[:, None], truth[None, :, 3] + half_z_t[None, :]) - np.maximum(
        predicted[:, None, 3] - half_z_p[:, None], truth[None, :, 3] - half_z_t[None, :])
    reach = np.hypot(predicted[:, 4], predicted[:, 5])[:, None] / 2 + np.hypot(truth[:, 4], truth[:, 5])[None, :] / 2
    near = np.hypot(predicted[:, None, 1] - truth[None, :, 1], predicted[:, None, 2] - truth[None, :, 2]) <= reach
    volumes_p, volumes_t = np.prod(predicted[:, 4:7], axis=1), np.prod(truth[:, 4:7], axis=1)
    for i, j in zip(*np.nonzero(near & (heights > 0)), strict=True):
        both = intersection_area(rect_p[i], rect_t[j]) * heights[i, j]
        ious[i, j] = min(max(both / (volumes_p[i] + volumes_t[j] - both), 0.0), 1.0)
    return ious


def _average_precision(best_iou: np.ndarray, best_true: np.ndarray, n_true: int, threshold: float) -> float:
    """The host's AP. Predictions (most confident first) each look at the true box of highest IoU: above the
    threshold it is a true positive if no earlier prediction took that box, so the hits are the first
    prediction per box among those above the threshold. All-point interpolated precision over recall."""
    hits = np.zeros(len(best_iou))
    above = np.flatnonzero(best_iou > threshold)
    hits[above[np.unique(best_true[above], return_index=True)[1]]] = 1.0
    tp = np.cumsum(hits)
    recall = np.concatenate([[0.0], tp / n_true, [1.0]])
    precision = np.concatenate([[0.0], tp / np.arange(1, len(hits) + 1), [0.0]])
    precision = np.maximum.accumulate(precision[::-1])[::-1]
    steps = np.flatnonzero(recall[1:] != recall[:-1])
    return float(np.sum((recall[steps + 1] - recall[steps]) * precision[steps + 1]))


def sample_maps(truth_text: object, guess_text: object) -> list[float]:
    """One sample's mAP at each threshold: the mean over its true classes (0 for a class not predicted)."""
    true_names, truths = from_answers(parse_boxes, truth_text)
    names, guesses = parse_boxes(guess_text)
    classes = sorted(set(true_names))
    per_class = []
    for name in classes:
        mine = guesses[names == name]
        mine = mine[np.argsort(-mine[:, 0], kind="stable")]
        if not len(mine):
            per_class.append([0.0] * len(THRESHOLDS))
            continue
        ious = iou_3d(mine, truths[true_names == name])  # the class is true here: at least one column
        best_true, best_iou = np.argmax(ious, axis=1), np.max(ious, axis=1)
        n_true = int(np.sum(true_names == name))
        per_class.append([_average_precision(best_iou, best_true, n_true, t) for t in THRESHOLDS])
    return list(np.mean(per_class, axis=0)) if per_class else [math.nan] * len(THRESHOLDS)


def lyft_map(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """The mean over samples and IoU thresholds 0.5, 0.55, ..., 0.95 of each sample's mAP."""
    return float(np.mean([sample_maps(t, p) for t, p in zip(y_true, y_pred, strict=True)]))

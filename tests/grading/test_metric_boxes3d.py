"""Lyft's 3-D mAP against an independent computation: shapely polygons for the ground rectangles (what
the host's script uses), and the host's procedure written out box by box."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import Polygon

from leaderboard.grading.metrics import boxes3d, get_metric
from leaderboard.grading.validation import SubmissionError


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def _corners(box):
    """The host's corner formulas, with the yaw's rotation as a quaternion about z would give it."""
    _, x, y, _, width, length, _, yaw = box
    c, s = math.cos(yaw), math.sin(yaw)
    return [(x + length / 2 * c + width / 2 * s, y + length / 2 * s - width / 2 * c),
            (x + length / 2 * c - width / 2 * s, y + length / 2 * s + width / 2 * c),
            (x - length / 2 * c - width / 2 * s, y - length / 2 * s + width / 2 * c),
            (x - length / 2 * c + width / 2 * s, y - length / 2 * s - width / 2 * c)]


def _iou(a, b):
    ground = Polygon(_corners(a)).intersection(Polygon(_corners(b))).area
    height = max(0.0, min(a[3] + a[6] / 2, b[3] + b[6] / 2) - max(a[3] - a[6] / 2, b[3] - b[6] / 2))
    both = ground * height
    return float(np.clip(both / (np.prod(a[4:7]) + np.prod(b[4:7]) - both), 0, 1))


def _box(rng, near=None):
    if near is None:
        return [1.0, *rng.uniform(0, 60, 2), rng.uniform(-2, 0), *rng.uniform(1.5, 5, 3), rng.uniform(-3, 3)]
    jitter = [0, *rng.normal(0, 0.4, 3), *rng.normal(0, 0.2, 3), rng.normal(0, 0.2)]
    box = [v + j for v, j in zip(near, jitter, strict=True)]
    box[4:7] = [abs(v) + 0.1 for v in box[4:7]]
    return box


def test_iou_matches_shapely(rng):
    truth = np.array([_box(rng) for _ in range(12)])
    predicted = np.array([_box(rng, near=truth[k % 12]) if k % 3 else _box(rng) for k in range(20)])
    expected = [[_iou(p, t) for t in truth] for p in predicted]
    got = boxes3d.iou_3d(predicted, truth)
    assert np.allclose(got, expected) and (got > 0.3).sum() >= 10


def _ap_reference(preds, gts, threshold):
    """The host's recall_precision for one class of one sample, as written in its description."""
    preds = sorted(preds, key=lambda p: p[0], reverse=True)
    checked, tp, fp = [False] * len(gts), [], []
    for p in preds:
        overlaps = [_iou(p, g) for g in gts]
        best = int(np.argmax(overlaps))
        if overlaps[best] > threshold and not checked[best]:
            checked[best] = True
            tp.append(1)
            fp.append(0)
        else:
            tp.append(0)
            fp.append(1)
    tp, fp = np.cumsum(tp), np.cumsum(fp)
    recall = np.concatenate([[0], tp / len(gts), [1]])
    precision = np.concatenate([[0], tp / np.maximum(tp + fp, 1e-300), [0]])
    for i in range(len(precision) - 1, 0, -1):
        precision[i - 1] = max(precision[i - 1], precision[i])
    return sum((recall[i + 1] - recall[i]) * precision[i + 1] for i in range(len(recall) - 1)
               if recall[i + 1] != recall[i])


def _text(boxes):
    return " ".join(" ".join(f"{v:.4f}" for v in b[:8]) + f" {b[8]}" for b in boxes)


def test_sample_map_matches_the_hosts_procedure(rng):
    names = ["car", "pedestrian", "truck"]
    truth = [[*_box(rng), names[k % 3]] for k in range(9)]
    guesses = [[round(rng.random(), 3), *_box(rng, near=t[:8])[1:], t[8]] for t in truth if rng.random() < 0.8]
    guesses += [[round(rng.random(), 3), *_box(rng)[1:], "car"], [0.9, *_box(rng)[1:], "bus"]]
    guesses.append([0.95, *truth[0][1:8], truth[0][8]])  # an exact box, twice: the second is a false positive
    guesses.append([0.94, *truth[0][1:8], truth[0][8]])
    truth_rounded = [[float(f"{v:.4f}") for v in b[:8]] + [b[8]] for b in truth]
    guess_rounded = [[float(f"{v:.4f}") for v in b[:8]] + [b[8]] for b in guesses]
    expected = [np.mean([_ap_reference([g[:8] for g in guess_rounded if g[8] == n],
                                       [t[:8] for t in truth_rounded if t[8] == n], threshold)
                         if any(g[8] == n for g in guess_rounded) else 0.0 for n in sorted(set(names))])
                for threshold in boxes3d.THRESHOLDS]
    got = boxes3d.sample_maps(_text(truth), _text(guesses))
    assert np.allclose(got, expected) and 0 < np.mean(got) < 1


def test_lyft_map_averages_samples_and_thresholds(rng):
    truth = [[*_box(rng), "car"] for _ in range(3)]
    y_true = np.array([_text(truth), _text(truth[:1])], dtype=object)
    y_pred = np.array([_text(truth), ""], dtype=object)  # sample 2: nothing predicted scores 0
    assert get_metric("lyft-3d-map").fn(y_true, y_pred) == pytest.approx(0.5)


@pytest.mark.parametrize(("text", "message"), [("1 2 3 4 5 6 7 8", "expected groups of 9"),
                                               ("1 2 3 4 5 x 7 8 car", "not a number"),
                                               ("1 2 3 4 5 0 7 8 car", "sizes positive"),
                                               ("1 2 3 4 5 nan 7 8 car", "finite")])
def test_malformed_boxes_are_rejected(text, message):
    with pytest.raises(SubmissionError, match=message):
        boxes3d.parse_boxes(text)

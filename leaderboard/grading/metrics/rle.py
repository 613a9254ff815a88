"""Run-length-encoded masks: MLE-bench's reading of them, and the segmentation scores built on it.

A mask is read as runs of flat pixel indices (0-based, half-open), never as a pixel array, so a mask
of a billion pixels costs what its runs cost. Per-image scores (Dice, F-beta, IoU) only need the areas
of the two masks and of their overlap, which do not depend on the pixel order; only the Hausdorff
distance needs pixel coordinates (MLE-bench's order: down each column, then right).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import directed_hausdorff

from ..validation import SubmissionError, from_answers

Runs = tuple[np.ndarray, np.ndarray]  # (starts, ends), 0-based, sorted, disjoint, clipped to the image


def _tokens(rle: str) -> np.ndarray:
    tokens = rle.split()
    try:
        return np.array(tokens, dtype=np.int64)
    except (ValueError, OverflowError):
        try:  # Python's int() also takes '+3' or '1_000', as MLE-bench's map(int, ...) does
            return np.array([int(t) for t in tokens], dtype=np.int64)
        except (ValueError, OverflowError):
            raise SubmissionError(f"run-length mask {rle[:40]!r} is not whole numbers separated by spaces") from None


def runs(rle: object, n_pixels: int) -> Runs:
    """MLE-bench's rle_decode as runs: '' is an empty mask; pairs 'start length' (1-based starts) must be
    sorted, positive and non-overlapping; runs past the image's end are cut there, as numpy slicing does."""
    text = "" if rle is None else str(rle)
    values = _tokens(text) if text.strip() else np.empty(0, np.int64)
    if len(values) % 2:
        raise SubmissionError(f"run-length mask {text[:40]!r} has an odd number of values: expected start/length pairs")
    starts, lengths = values[0::2], values[1::2]
    if (np.diff(starts) < 0).any():
        raise SubmissionError(f"run-length mask {text[:40]!r}: the pairs must be sorted by start")
    if (starts <= 0).any() or (lengths <= 0).any():
        raise SubmissionError(f"run-length mask {text[:40]!r}: starts and lengths must be positive")
    begin, end = np.minimum(starts - 1, n_pixels), np.minimum(starts - 1 + lengths, n_pixels)
    if len(begin) > 1 and (begin[1:] < np.maximum.accumulate(end)[:-1]).any():
        raise SubmissionError(f"run-length mask {text[:40]!r}: runs overlap")
    return begin, end


def area(mask: Runs) -> int:
    return int(np.sum(mask[1] - mask[0]))


def overlap(a: Runs, b: Runs) -> int:
    """Pixels in both masks: sweep the run boundaries of both, count the length covered twice."""
    positions = np.concatenate([a[0], a[1], b[0], b[1]])
    if positions.size == 0:
        return 0
    steps = np.concatenate([np.ones(len(a[0])), -np.ones(len(a[1])), np.ones(len(b[0])), -np.ones(len(b[1]))])
    order = np.argsort(positions, kind="stable")
    positions, coverage = positions[order], np.cumsum(steps[order])
    return int(np.sum(np.diff(positions)[coverage[:-1] == 2]))


def counts(truth: Runs, guess: Runs) -> tuple[int, int, int]:
    """(true area, predicted area, overlap) of two masks."""
    return area(truth), area(guess), overlap(truth, guess)


def _shapes(context: np.ndarray) -> np.ndarray:
    """Answers' (height, width) columns as integers; MLE-bench's astype(int) of values such as '266.0'."""
    return np.asarray(context, dtype=object).astype(np.float64).astype(np.int64).reshape(-1, 2)


def _mask_pairs(y_true, y_pred, sizes) -> list[tuple[int, int, int]]:
    return [counts(from_answers(runs, t, int(n)), runs(p, int(n))) for t, p, n in zip(y_true, y_pred, sizes,
                                                                                       strict=True)]


def dice(true_area: int, pred_area: int, both: int, both_empty: float) -> float:
    return both_empty if true_area + pred_area == 0 else 2 * both / (true_area + pred_area)


def mean_dice(y_true: np.ndarray, y_pred: np.ndarray, shapes: np.ndarray) -> float:
    """HuBMAP: the mean over images of the Dice coefficient, 1 for an image where both masks are empty."""
    sizes = np.prod(_shapes(shapes), axis=1)
    return float(np.mean([dice(*c, both_empty=1.0) for c in _mask_pairs(y_true, y_pred, sizes)]))


def global_dice(y_true: np.ndarray, y_pred: np.ndarray, shapes: np.ndarray) -> float:
    """Contrails: one Dice coefficient over all pixels of all images; '-' is an empty mask."""
    sizes = np.prod(_shapes(shapes), axis=1)
    blank = np.vectorize(lambda text: "" if text == "-" else text, otypes=[object])
    totals = np.sum(_mask_pairs(blank(y_true), blank(y_pred), sizes), axis=0)
    return dice(*(int(x) for x in totals), both_empty=float("nan"))


def f_beta(true_area: int, pred_area: int, both: int, beta: float) -> float:
    """scikit-learn's F-beta of pixel labels; 0 where it divides by zero (its zero_division)."""
    if both == 0:
        return 0.0
    precision, recall = both / pred_area, both / true_area
    return (1 + beta**2) * precision * recall / (beta**2 * precision + recall)


def mean_f05(y_true: np.ndarray, y_pred: np.ndarray, shapes: np.ndarray) -> float:
    """Vesuvius: the mean over fragments of the pixel F0.5 score."""
    sizes = np.prod(_shapes(shapes), axis=1)
    return float(np.mean([f_beta(*c, beta=0.5) for c in _mask_pairs(y_true, y_pred, sizes)]))


TGS_SIDE = 101
IOU_THRESHOLDS = np.arange(0.5, 1.0, 0.05)


def _tgs_iou(true_area: int, pred_area: int, both: int, n_pixels: int) -> float:
    """MLE-bench's histogram IoU: an empty prediction falls in the object bin of np.histogram2d (its
    range collapses to one value), so it counts as the whole image."""
    if pred_area == 0:
        return true_area / n_pixels
    return both / (true_area + pred_area - both)


def iou_sweep(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """TGS salt: per image the share of IoU thresholds 0.5, 0.55, ..., 0.95 the mask's IoU exceeds
    (1 when both masks are empty, 0 for a prediction on an empty image); the mean over images."""
    n = TGS_SIDE * TGS_SIDE
    scores = []
    for true_area, pred_area, both in _mask_pairs(y_true, y_pred, np.full(len(y_true), n)):
        if true_area == 0:
            scores.append(1.0 if pred_area == 0 else 0.0)
        else:
            scores.append(float(np.mean(_tgs_iou(true_area, pred_area, both, n) > IOU_THRESHOLDS)))
    return float(np.mean(scores))


def pixel_indices(mask: Runs) -> np.ndarray:
    """Every flat pixel index of the mask's runs, from its starts and lengths without a Python loop."""
    lengths = mask[1] - mask[0]
    if lengths.sum() == 0:
        return np.empty(0, np.int64)
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(mask[0], lengths) + offsets


def _volume_points(masks: list[Runs], height: int) -> np.ndarray:
    """(slice, row, column) of every pixel of a stack of column-major masks, pixels of one slice once."""
    points = [np.column_stack([np.full(len(flat), z), flat % height, flat // height])
              for z, flat in enumerate(np.unique(pixel_indices(m)) for m in masks)]
    return np.concatenate(points) if points else np.empty((0, 3), np.int64)


def hausdorff(truth: np.ndarray, guess: np.ndarray, shape: tuple[int, int, int]) -> float:
    """UW-Madison's normalised 3-D Hausdorff distance, with MLE-bench's shortcuts: NaN when both volumes
    are empty, 0 when equal, 1 when only one is empty or the prediction is over 10 times the truth."""
    if len(truth) == 0 and len(guess) == 0:
        return float("nan")
    if len(truth) == len(guess) and np.array_equal(truth, guess):
        return 0.0
    if len(truth) == 0 or len(guess) == 0 or len(guess) > 10 * len(truth):
        return 1.0
    a, b = truth / np.array(shape), guess / np.array(shape)
    return max(directed_hausdorff(a, b)[0], directed_hausdorff(b, a)[0]) / np.sqrt(3)


def _case_days(ids: list[str]) -> dict[str, list[str]]:
    """Slice ids ('case123_day20_slice_0001') grouped by case and day, in MLE-bench's order: slices sorted,
    case-days in the order their first slice comes."""
    days: dict[str, list[str]] = {}
    for slice_id in sorted(set(ids)):
        days.setdefault(slice_id.split("_slice_")[0], []).append(slice_id)
    return days


def _volumes(masks: list[Runs], ids: list[str], shapes: np.ndarray) -> list[tuple[np.ndarray, tuple]]:
    """Per case-day, the (slice, row, column) points of its slices stacked (the classes of a slice merged)
    and the volume's shape."""
    rows_of: dict[str, list[int]] = {}
    for row, slice_id in enumerate(ids):
        rows_of.setdefault(slice_id, []).append(row)
    volumes = []
    for slices in _case_days(ids).values():
        height, width = (int(x) for x in shapes[rows_of[slices[0]][0]])
        merged = [tuple(np.concatenate([masks[r][k] for r in rows_of[s]]) for k in (0, 1)) for s in slices]
        volumes.append((_volume_points(merged, height), (len(slices), height, width)))
    return volumes


def dice_hausdorff(y_true: np.ndarray, y_pred: np.ndarray, context: np.ndarray) -> float:
    """UW-Madison GI tract: 0.4 x the mean Dice per row (rows where both masks are empty left out) +
    0.6 x (1 - the mean 3-D Hausdorff distance per case and day, the classes of a slice merged).

    `y_pred`: the submission's id and predicted columns; `context`: the answers' id, image_height and
    image_width. Like MLE-bench, rows are paired by position (masks decoded with the answers row's size)
    and each file's rows are grouped into volumes by its own ids."""
    shapes = _shapes(context[:, 1:])
    sizes = shapes.prod(axis=1)
    truths = [from_answers(runs, t, int(n)) for t, n in zip(y_true, sizes, strict=True)]
    guesses = [runs(p, int(n)) for p, n in zip(y_pred[:, 1], sizes, strict=True)]
    dices = [dice(*counts(t, g), both_empty=float("nan")) for t, g in zip(truths, guesses, strict=True)]
    true_volumes = _volumes(truths, [str(i) for i in context[:, 0]], shapes)
    pred_volumes = _volumes(guesses, [str(i) for i in y_pred[:, 0]], shapes)
    pairs = zip(true_volumes, pred_volumes, strict=False)  # MLE-bench's zip: a surplus volume is not scored
    distances = [hausdorff(truth, guess, shape) for (truth, shape), (guess, _) in pairs]
    return 0.4 * float(np.nanmean(dices)) + 0.6 * (1 - float(np.nanmean(distances)))

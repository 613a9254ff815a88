"""Object detection: boxes and points read from prediction strings, and the scores MLE-bench computes on
them: SIIM's per-class average precision at IoU > 0.5, VinBigData's COCO mAP at IoU 0.4, Kuzushiji's F1
of centre points inside boxes. Boxes of one image are compared all at once (numpy broadcasting); the
greedy matching itself goes prediction by prediction, as each match depends on the previous ones.
"""

from __future__ import annotations

import numpy as np

from ..validation import SubmissionError, from_answers


def _floats(tokens: list[str], text: str) -> np.ndarray:
    try:
        return np.array([float(t) for t in tokens], dtype=np.float64)
    except ValueError:
        raise SubmissionError(f"prediction {text[:60]!r} has a value that is not a number") from None


def parse_objects(text: object, width: int, split_on_any_space: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """'label v1 v2 ... label v1 v2 ...' in groups of `width` tokens -> (labels, (n, width - 1) numbers)."""
    text = str(text)
    tokens = text.split() if split_on_any_space else text.split(" ")
    if len(tokens) % width:
        raise SubmissionError(f"prediction {text[:60]!r} has {len(tokens)} values: expected groups of {width}")
    groups = np.array(tokens, dtype=object).reshape(-1, width)
    return groups[:, 0].astype(str), _floats(list(groups[:, 1:].ravel()), text).reshape(-1, width - 1)


def iou_xyxy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box in `a` with every box in `b`, boxes as (x_min, y_min, x_max, y_max); 0 for an empty union."""
    width = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    height = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    both = width * height
    area_a, area_b = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]), (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - both
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, both / np.where(union > 0, union, 1), 0.0)


def average_precision(y_true: np.ndarray, scores: np.ndarray) -> float:
    """scikit-learn's average_precision_score: the sum over distinct score thresholds, highest first, of
    (recall gained) x precision."""
    order = np.argsort(-scores, kind="mergesort")
    y, s = np.asarray(y_true, np.float64)[order], scores[order]
    last = np.r_[np.flatnonzero(np.diff(s)), len(s) - 1]  # the last row of each distinct score
    tps = np.cumsum(y)[last]
    precision, recall = tps / (last + 1), tps / tps[-1]
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def _siim_pairs(truth: tuple, guess: tuple, label: str) -> list[tuple[int, float]]:
    """One image's (is true, score) pairs for a class: matched predictions (1, confidence), unmatched
    ones (0, confidence), missed boxes (1, 0), and (0, 0) when the class is neither true nor predicted."""
    boxes = truth[1][truth[0] == label][:, 1:]
    mine = guess[0] == label
    predicted = guess[1][mine]
    ious = iou_xyxy(predicted[:, 1:], boxes) if len(boxes) else np.zeros((len(predicted), 0))
    free, pairs = np.ones(len(boxes), dtype=bool), []
    for row, confidence in enumerate(predicted[:, 0]):
        candidates = np.where(free & (ious[row] > 0.5), ious[row], 0.0)
        if candidates.any():
            free[int(np.argmax(candidates))] = False  # the first box with the highest IoU is used up
        pairs.append((int(candidates.any()), float(confidence)))
    pairs += [(1, 0.0)] * int(free.sum())
    return pairs or [(0, 0.0)]


def _by_confidence(objects: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-objects[1][:, 0], kind="stable")
    return objects[0][order], objects[1][order]


def siim_map(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """SIIM-FISABIO-RSNA COVID-19, as MLE-bench scores it: per class of the answers ('negative', 'typical',
    ..., 'none', 'opacity') the average precision of the pairs of every image, averaged over classes.
    Predictions are 'label confidence x_min y_min x_max y_max' groups; a box matches the unused true box
    of its class with the highest IoU above 0.5, most confident prediction first."""
    truths = [from_answers(parse_objects, t, 6) for t in y_true]
    guesses = [_by_confidence(parse_objects(p, 6)) for p in y_pred]
    precisions = []
    for label in sorted(set().union(*(set(t[0]) for t in truths))):
        pairs = [pair for truth, guess in zip(truths, guesses, strict=True)
                 for pair in _siim_pairs(truth, guess, label)]
        labels, scores = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
        # Every pair true (no false positive, no image without the class): MLE-bench asserts and gives no
        # score; NaN makes the report say the metric is undefined for this file.
        precisions.append(float("nan") if labels.all() else average_precision(labels, scores))
    return float(np.mean(precisions)) if precisions else 0.0


def _page_counts(truth: str, guess: str) -> tuple[int, int, int]:
    """(true positives, false positives, false negatives) of one page: a predicted centre point scores when
    it lies strictly inside an unmatched true box of the same character (first such prediction taken)."""
    guess_labels, points = parse_objects(guess, 3, split_on_any_space=False) if guess else (np.array([]), None)
    if not truth:
        return 0, len(guess_labels), 0
    if not guess:
        return 0, 0, len(truth.split(" ")) // 5
    labels, boxes = from_answers(parse_objects, truth, 5, split_on_any_space=False)
    inside = ((boxes[:, None, 0] < points[None, :, 0]) & (boxes[:, None, 0] + boxes[:, None, 2] > points[None, :, 0])
              & (boxes[:, None, 1] < points[None, :, 1]) & (boxes[:, None, 1] + boxes[:, None, 3] > points[None, :, 1])
              & (labels[:, None] == guess_labels[None, :]))
    unused, hits = np.ones(len(points), dtype=bool), 0
    for row in inside:
        candidates = row & unused
        if candidates.any():
            unused[int(np.argmax(candidates))] = False
            hits += 1
    return hits, int(unused.sum()), len(boxes) - hits


def kuzushiji_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Kuzushiji recognition: F1 over all pages of character predictions 'label x y' (centre points)
    against true 'label x y width height' boxes; an empty cell is a page without characters."""
    tp, fp, fn = (sum(c) for c in zip(*(_page_counts(str(t), str(p)) for t, p in zip(y_true, y_pred, strict=True)),
                                      strict=True))
    if tp == 0:
        return 0.0
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)


COCO_RECALLS = np.linspace(0.0, 1.0, 101)
COCO_MAX_DETECTIONS = 100
COCO_AREA = (0.0, 1e10)


def _coco_iou(dt: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """pycocotools' box IoU of (x, y, w, h) boxes: 0 unless the boxes overlap in both directions."""
    width = np.minimum(dt[:, None, 0] + dt[:, None, 2], gt[None, :, 0] + gt[None, :, 2]) - np.maximum(
        dt[:, None, 0], gt[None, :, 0])
    height = np.minimum(dt[:, None, 1] + dt[:, None, 3], gt[None, :, 1] + gt[None, :, 3]) - np.maximum(
        dt[:, None, 1], gt[None, :, 1])
    both = np.where((width > 0) & (height > 0), width * height, 0.0)
    union = (dt[:, 2] * dt[:, 3])[:, None] + (gt[:, 2] * gt[:, 3])[None, :] - both
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(both > 0, both / union, 0.0)


def _outside(boxes: np.ndarray) -> np.ndarray:
    """MLE-bench's area field, (x_max - x_min) (y_max - y_min), outside COCO's 'all' range: ignored."""
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return (area < COCO_AREA[0]) | (area > COCO_AREA[1])


def _coco_image(gt: np.ndarray, dt: np.ndarray, threshold: float, first_gt_uncounted: bool,
                first_dt_frees: bool = False):
    """COCOeval.evaluateImg for one image and category: (scores, true positive?, ignored?) of its
    detections and the number of counted true boxes. gt: (m, 4) boxes; dt: (n, 5) score + box.
    first_dt_frees: dt[0] is MLE-bench's detection id 0, whose match COCO does not record on the box."""
    gt = gt[np.argsort(_outside(gt), kind="mergesort")]
    gt_ignored = _outside(gt)
    order = np.argsort(-dt[:, 0], kind="mergesort")[:COCO_MAX_DETECTIONS]
    dt = dt[order]
    zero = int(np.flatnonzero(order == 0)[0]) if first_dt_frees and (order == 0).any() else -1
    ious = _coco_iou(dt[:, 1:], gt) if len(gt) and len(dt) else np.zeros((len(dt), len(gt)))
    taken = np.zeros(len(gt), dtype=bool)
    hit, ignored = np.zeros(len(dt), dtype=bool), np.zeros(len(dt), dtype=bool)
    for d in range(len(dt)):
        best, match = min(threshold, 1 - 1e-10), -1
        for g in range(len(gt)):
            if taken[g]:
                continue
            if match > -1 and not gt_ignored[match] and gt_ignored[g]:
                break
            if ious[d, g] >= best:
                best, match = ious[d, g], g
        if match > -1:
            taken[match], ignored[d] = d != zero, gt_ignored[match]
            hit[d] = not (first_gt_uncounted and match == 0)  # MLE-bench's annotation id 0 reads as no match
    ignored |= ~hit & _outside(dt[:, 1:])
    return dt[:, 0], hit, ignored, int(np.count_nonzero(~gt_ignored))


def _coco_category_ap(images: list) -> float | None:
    """COCOeval.accumulate for one category: precision at 101 recall points, averaged; None if no true box."""
    if not images:
        return None
    scores, hits, ignored = (np.concatenate([image[i] for image in images]) for i in range(3))
    counted = sum(image[3] for image in images)
    if counted == 0:
        return None
    order = np.argsort(-scores, kind="mergesort")
    hits, ignored = hits[order], ignored[order]
    tp, fp = np.cumsum(hits & ~ignored).astype(float), np.cumsum(~hits & ~ignored).astype(float)
    if len(tp) == 0:
        return 0.0
    recall, precision = tp / counted, tp / (tp + fp + np.spacing(1))
    precision = np.maximum.accumulate(precision[::-1])[::-1]
    where = np.searchsorted(recall, COCO_RECALLS, side="left")
    return float(np.mean(np.where(where < len(precision), precision[np.minimum(where, len(precision) - 1)], 0.0)))


def coco_map(y_true: np.ndarray, y_pred: np.ndarray, threshold: float = 0.4, first_row: int | None = None) -> float:
    """VinBigData as MLE-bench scores it with pycocotools: COCO's mean average precision at IoU 0.4
    (up to 100 detections per image and class; classes without a true box left out).

    y_true: per image 'class x_min y_min x_max y_max ...'; y_pred: 'class score x_min y_min x_max y_max
    ...'. Like MLE-bench, the corners are handed to COCO as (x, y, width, height). first_row: the row
    whose first prediction MLE-bench numbers 0 (the file's first row), to reproduce what it prints."""
    truths = [from_answers(parse_objects, t, 5, split_on_any_space=False) for t in y_true]
    guesses = [parse_objects(p, 6, split_on_any_space=False) for p in y_pred]
    true_classes = [labels.astype(np.float64).astype(int) for labels, _ in truths]
    guess_classes = [labels.astype(np.float64).astype(int) for labels, _ in guesses]
    precisions = []
    for category in sorted(set().union(*(set(c) for c in true_classes))):
        images = []
        for k, ((_, boxes), (_, found)) in enumerate(zip(truths, guesses, strict=True)):
            gt, dt = boxes[true_classes[k] == category], found[guess_classes[k] == category]
            if len(gt) or len(dt):
                first = k == 0 and len(true_classes[0]) > 0 and true_classes[0][0] == category
                frees = first_row == k and len(guess_classes[k]) > 0 and guess_classes[k][0] == category
                images.append(_coco_image(gt, dt, threshold, first, frees))
        ap = _coco_category_ap(images)
        if ap is not None:
            precisions.append(ap)
    return float(np.mean(precisions)) if precisions else -1.0

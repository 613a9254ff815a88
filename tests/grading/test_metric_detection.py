"""Detection metrics against independent computations: scikit-learn's average precision on pairs matched
box by box in plain Python, pycocotools' own COCOeval (as MLE-bench calls it), and Kuzushiji's
point-in-box counts written as loops."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as sk

from leaderboard.grading.metrics import detection, get_metric
from leaderboard.grading.validation import SubmissionError


@pytest.fixture
def rng():
    return np.random.default_rng(3)


def _iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union > 0 else 0.0


def _box(rng, size=100.0):
    x, y = rng.uniform(0, size * 0.7, 2)
    return [x, y, x + rng.uniform(5, size * 0.3), y + rng.uniform(5, size * 0.3)]


def _jitter(rng, box, scale):
    return [v + rng.normal(0, scale) for v in box]


def _objects_text(objects):
    return " ".join(f"{label} " + " ".join(f"{v:.3f}" for v in values) for label, values in objects)


def test_iou_of_every_pair_matches_a_loop(rng):
    a, b = np.array([_box(rng) for _ in range(7)]), np.array([_box(rng) for _ in range(5)])
    expected = [[_iou(x, y) for y in b] for x in a]
    assert np.allclose(detection.iou_xyxy(a, b), expected)


def test_average_precision_matches_scikit_learn(rng):
    for _ in range(20):
        y = rng.integers(0, 2, 50)
        y[0] = 1
        scores = np.round(rng.random(50), 1)  # ties between pairs, and zero scores for missed boxes
        assert detection.average_precision(y, scores) == pytest.approx(sk.average_precision_score(y, scores))


def _siim_reference(truths, guesses):
    """grade.py's procedure in plain Python: per class, pairs image by image, then scikit-learn's AP."""
    classes = sorted({label for objects in truths for label, _ in objects})
    precisions = []
    for cls in classes:
        y, s = [], []
        for truth, guess in zip(truths, guesses, strict=True):
            boxes = [values[1:] for label, values in truth if label == cls]
            used, pairs = [False] * len(boxes), []
            for label, values in sorted(guess, key=lambda o: o[1][0], reverse=True):
                if label != cls:
                    continue
                best, where = 0.0, -1
                for i, box in enumerate(boxes):
                    iou = _iou(values[1:], box)
                    if not used[i] and iou > best and iou > 0.5:
                        best, where = iou, i
                if where >= 0:
                    used[where] = True
                pairs.append((int(where >= 0), values[0]))
            pairs += [(1, 0.0)] * used.count(False)
            for label, score in pairs or [(0, 0.0)]:
                y.append(label)
                s.append(score)
        precisions.append(sk.average_precision_score(y, s))
    return np.mean(precisions)


def _siim_case(rng, n=60):
    truths, guesses = [], []
    for k in range(n):
        if k % 2:  # a study row: one class, a dummy box
            label = str(rng.choice(["negative", "typical", "indeterminate", "atypical"]))
            truth = [(label, [1, 0, 0, 1, 1])]
            guess = [(str(rng.choice(["negative", "typical", label, label])), [round(rng.random(), 2), 0, 0, 1, 1])]
        else:  # an image row: opacity boxes or none
            boxes = [_box(rng, 1000) for _ in range(rng.integers(0, 3))]
            truth = [("opacity", [1, *b]) for b in boxes] or [("none", [1, 0, 0, 1, 1])]
            guess = [("opacity", [round(rng.random(), 2), *_jitter(rng, b, 40)]) for b in boxes if rng.random() < 0.8]
            guess += [("opacity", [round(rng.random(), 2), *_box(rng, 1000)]) for _ in range(rng.integers(0, 2))]
            guess.append(("none", [round(rng.random(), 2), 0, 0, 1, 1]))
        truths.append(truth)
        guesses.append(guess)
    return truths, guesses


def test_siim_map_matches_grade_pys_procedure(rng):
    truths, guesses = _siim_case(rng)
    got = get_metric("siim-map").fn(np.array([_objects_text(t) for t in truths], dtype=object),
                                    np.array([_objects_text(g) for g in guesses], dtype=object))
    expected = _siim_reference([[(lab, [round(v, 3) for v in vals]) for lab, vals in t] for t in truths],
                               [[(lab, [round(v, 3) for v in vals]) for lab, vals in g] for g in guesses])
    assert got == pytest.approx(expected) and 0 < got < 1


@pytest.mark.parametrize(("text", "message"), [("opacity 0.5 1 2 3", "expected groups of 6"),
                                               ("opacity 0.5 1 2 3 x", "not a number")])
def test_siim_rejects_malformed_predictions(text, message):
    with pytest.raises(SubmissionError, match=message):
        get_metric("siim-map").fn(np.array(["none 1 0 0 1 1"]), np.array([text]))


def _coco_reference(truths, guesses, threshold=0.4):
    """MLE-bench's VinBigDataEval, through pycocotools itself: corners given as COCO's (x, y, w, h)."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    gts, dts, k = [], [], 0
    for image, objects in enumerate(truths):
        for label, (x1, y1, x2, y2) in objects:
            gts.append({"id": k, "image_id": image, "category_id": label, "bbox": [x1, y1, x2, y2], "ignore": 0,
                        "area": (x2 - x1) * (y2 - y1), "iscrowd": 0, "segmentation": []})
            k += 1
    k = 0
    for image, objects in enumerate(guesses):
        for label, (score, x1, y1, x2, y2) in objects:
            dts.append({"id": k, "image_id": image, "category_id": label, "bbox": [x1, y1, x2, y2], "ignore": 0,
                        "area": (x2 - x1) * (y2 - y1), "iscrowd": 0, "segmentation": [], "score": score})
            k += 1
    images = [{"id": i} for i in range(len(truths))]
    categories = [{"id": c, "name": c, "supercategory": "none"} for c in sorted({g["category_id"] for g in gts})]
    truth, found = COCO(), COCO()
    truth.dataset = {"images": images, "categories": categories, "annotations": gts}
    found.dataset = {"images": images, "categories": categories, "annotations": dts}
    truth.createIndex()
    found.createIndex()
    evaluation = COCOeval(truth, found, "bbox")
    evaluation.params.iouThrs = np.array([threshold])
    evaluation.evaluate()
    evaluation.accumulate()
    evaluation.summarize()
    return evaluation.stats[0]


def _vinbig_case(rng, n=40, classes=6):
    truths, guesses = [], []
    for _ in range(n):
        truth = [(int(rng.integers(0, classes)), [round(v, 1) for v in _box(rng, 1000)])
                 for _ in range(rng.integers(1, 4))]
        guess = [(label, [round(rng.random(), 3), *(round(v, 1) for v in _jitter(rng, box, 15))])
                 for label, box in truth if rng.random() < 0.85]
        guess += [(int(rng.integers(0, classes + 1)), [round(rng.random(), 3), *(round(v, 1) for v in _box(rng, 1000))])
                  for _ in range(rng.integers(0, 3))]
        truths.append(truth)
        guesses.append(guess or [(0, [0.01, 1, 1, 2, 2])])
    truths[0].insert(0, (14, [0.0, 0.0, 0.0, 0.0]))  # 'no finding' boxes: zero area, never matched
    guesses[0].append((14, [1.0, 0, 0, 1, 1]))
    return truths, guesses


def test_coco_map_matches_pycocotools(rng, capsys):
    truths, guesses = _vinbig_case(rng)
    expected = _coco_reference(truths, guesses)
    y_true = np.array([" ".join(f"{c} {x1} {y1} {x2} {y2}" for c, (x1, y1, x2, y2) in t) for t in truths])
    y_pred = np.array([_objects_text(g) for g in guesses])
    got = get_metric("coco-map@0.4").fn(y_true, y_pred)
    assert got == pytest.approx(expected) and 0 < got < 1


def test_coco_map_of_the_answers_is_not_one_like_mle_bench(rng, capsys):
    """MLE-bench numbers annotations from 0, and COCO reads a match with annotation 0 as no match."""
    truths, _ = _vinbig_case(rng, n=15)
    truths[0] = truths[0][1:]  # no zero-area box
    perfect = [[(c, [1.0, *box]) for c, box in t] for t in truths]
    y_true = np.array([" ".join(f"{c} {x1} {y1} {x2} {y2}" for c, (x1, y1, x2, y2) in t) for t in truths])
    got = get_metric("coco-map@0.4").fn(y_true, np.array([_objects_text(g) for g in perfect]))
    assert got == pytest.approx(_coco_reference(truths, perfect)) and got < 1


def _kuzushiji_reference(truths, guesses):
    tp = fp = fn = 0
    for truth, guess in zip(truths, guesses, strict=True):
        used = [False] * len(guess)
        for label, x, y, w, h in truth:
            for i, (g_label, gx, gy) in enumerate(guess):
                if not used[i] and g_label == label and x < gx < x + w and y < gy < y + h:
                    used[i], tp = True, tp + 1
                    break
            else:
                fn += 1
        fp += used.count(False)
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)


def test_kuzushiji_f1_matches_point_in_box_loops(rng):
    chars = ["U+306F", "U+304C", "U+3044", "U+3059"]
    truths, guesses = [], []
    for _ in range(30):
        truth = [(str(rng.choice(chars)), *(int(v) for v in rng.integers(0, 500, 2)), *(int(v) for v in
                                                                                       rng.integers(10, 60, 2)))
                 for _ in range(rng.integers(0, 8))]
        guess = [(str(rng.choice(chars)) if rng.random() < 0.2 else label, x + w * rng.uniform(-0.2, 1.2),
                  y + h * rng.uniform(-0.2, 1.2)) for label, x, y, w, h in truth]
        guess += [guess[0]] if guess and rng.random() < 0.3 else []  # a repeated point: one of them is spare
        truths.append(truth)
        guesses.append([(lab, round(x, 1), round(y, 1)) for lab, x, y in guess])
    text = np.array([" ".join(" ".join(map(str, o)) for o in t) for t in truths], dtype=object)
    guessed = np.array([" ".join(" ".join(map(str, o)) for o in g) for g in guesses], dtype=object)
    got = get_metric("kuzushiji-f1").fn(text, guessed)
    assert got == pytest.approx(_kuzushiji_reference(truths, guesses)) and 0 < got < 1


def test_kuzushiji_counts_pages_without_characters():
    # page 1: nothing true, two predictions (2 FP); page 2: one true, nothing predicted (1 FN); page 3: hit
    f1 = get_metric("kuzushiji-f1").fn(np.array(["", "U+3044 0 0 10 10", "U+3044 0 0 10 10"], dtype=object),
                                       np.array(["U+3044 1 1 U+3059 2 2", "", "U+3044 5 5"], dtype=object))
    assert f1 == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))


@pytest.mark.parametrize("text", ["U+3044 1", "U+3044 1 x", "U+3044  1 2"])
def test_kuzushiji_rejects_malformed_points(text):
    with pytest.raises(SubmissionError):
        get_metric("kuzushiji-f1").fn(np.array(["U+3044 0 0 10 10"]), np.array([text]))


def test_siim_map_is_undefined_when_a_class_has_only_true_pairs():
    # every image holds an opacity and every prediction finds it: MLE-bench's assertion fails, no score
    truth = np.array(["opacity 1 0 0 10 10", "opacity 1 5 5 20 20"])
    guess = np.array(["opacity 0.9 0 0 10 10", "opacity 0.8 5 5 20 20"])
    assert np.isnan(get_metric("siim-map").fn(truth, guess))

"""Run-length masks and the segmentation metrics, against brute force on pixel arrays: masks decoded
pixel by pixel, then scikit-learn, numpy's histogram IoU or all-pairs distances."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn import metrics as sk

from leaderboard.grading.metrics import get_metric, rle
from leaderboard.grading.validation import SubmissionError


def encode(mask: np.ndarray) -> str:
    """Column-major (down, then right) 1-based runs, written pixel by pixel."""
    flat, pairs, start = mask.flatten(order="F"), [], None
    for i, on in enumerate([*flat, False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            pairs += [start + 1, i - start]
            start = None
    return " ".join(map(str, pairs))


def decode(text: str, height: int, width: int) -> np.ndarray:
    """Pixel by pixel into a (height, width) array, runs cut at the image's end."""
    flat = np.zeros(height * width, dtype=bool)
    values = [int(t) for t in text.split()]
    for start, length in zip(values[0::2], values[1::2], strict=True):
        for k in range(start - 1, start - 1 + length):
            if k < height * width:
                flat[k] = True
    return flat.reshape((width, height)).T


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def _blobs(rng, n, height, width, density=0.3, empty_every=5):
    masks = []
    for k in range(n):
        mask = np.zeros((height, width), dtype=bool)
        if k % empty_every:
            y, x = rng.integers(0, height), rng.integers(0, width)
            mask[max(0, y - 5):y + 6, max(0, x - 4):x + 7] = True
            mask &= rng.random((height, width)) > density * rng.random()
        masks.append(mask)
    return masks


def test_runs_read_what_a_pixel_decoder_reads(rng):
    for mask in _blobs(rng, 20, 13, 17):
        text = encode(mask)
        assert np.array_equal(decode(text, 13, 17), mask)
        flat = np.zeros(13 * 17, dtype=bool)
        flat[rle.pixel_indices(rle.runs(text, 13 * 17))] = True
        assert np.array_equal(flat.reshape((17, 13)).T, mask)


def test_a_run_past_the_end_is_cut_there():
    assert rle.area(rle.runs("5 10 20 100", 24)) == 10 + 5  # pixels 20..24 of 24
    assert rle.area(rle.runs("30 2", 24)) == 0


def test_overlap_counts_shared_pixels(rng):
    for a, b in zip(_blobs(rng, 30, 20, 20), _blobs(rng, 30, 20, 20), strict=True):
        got = rle.overlap(rle.runs(encode(a), 400), rle.runs(encode(b), 400))
        assert got == int(np.sum(a & b))


@pytest.mark.parametrize(("text", "message"), [
    ("3 2 1 1", "must be sorted by start"), ("1 0", "must be positive"), ("0 3", "must be positive"),
    ("1 5 3 2", "runs overlap"), ("1 2 3", "odd number of values"), ("1 2.5", "not whole numbers"),
    ("a b", "not whole numbers"),
])
def test_malformed_masks_are_rejected_like_mle_bench(text, message):
    with pytest.raises(SubmissionError, match=message):
        rle.runs(text, 100)


def test_python_integer_spellings_are_read_like_int():
    assert rle.area(rle.runs("+3 1_0", 100)) == 10


def _dice(a, b, both_empty):
    total = a.sum() + b.sum()
    return both_empty if total == 0 else 2 * np.sum(a & b) / total


def _shapes(n, height, width):
    return np.array([[str(height), f"{width}.0"]] * n, dtype=object)  # MLE-bench's astype(int) of '266.0'


def test_mean_dice_against_pixel_arrays(rng):
    truths, guesses = _blobs(rng, 25, 30, 24), _blobs(rng, 25, 30, 24, empty_every=7)
    expected = np.mean([_dice(t, g, 1.0) for t, g in zip(truths, guesses, strict=True)])
    got = get_metric("mean-dice-rle").fn(np.array([encode(m) for m in truths]), np.array([encode(m) for m in guesses]),
                                         _shapes(25, 30, 24))
    assert got == pytest.approx(expected) and 0 < got < 1


def test_global_dice_against_pixel_arrays_with_dashes(rng):
    truths, guesses = _blobs(rng, 25, 16, 16), _blobs(rng, 25, 16, 16, empty_every=3)
    expected = _dice(np.concatenate(truths), np.concatenate(guesses), np.nan)
    text = np.array([encode(m) or "-" for m in truths]), np.array([encode(m) or "-" for m in guesses])
    assert get_metric("global-dice-rle").fn(*text, _shapes(25, 16, 16)) == pytest.approx(expected)


def test_mean_f05_against_scikit_learn(rng):
    truths, guesses = _blobs(rng, 6, 40, 31, empty_every=99), _blobs(rng, 6, 40, 31)
    expected = np.mean([sk.fbeta_score(t.ravel(), g.ravel(), beta=0.5, zero_division=0)
                        for t, g in zip(truths, guesses, strict=True)])
    got = get_metric("mean-f05-rle").fn(np.array([encode(m) for m in truths]), np.array([encode(m) for m in guesses]),
                                        _shapes(6, 40, 31))
    assert got == pytest.approx(expected) and 0 < got < 1


def _histogram_iou(truth, guess):
    """IoU from np.histogram2d with two bins per mask, the way MLE-bench's TGS grader bins the pixels."""
    both = np.histogram2d(truth.ravel(), guess.ravel(), bins=(2, 2))[0]
    area_true, area_pred = np.histogram(truth, bins=2)[0], np.histogram(guess, bins=2)[0]
    union = area_true[:, None] + area_pred[None, :] - both
    return both[1, 1] / union[1, 1]


def _tgs_reference(truth, guess):
    if truth.sum() == 0:
        return 1.0 if guess.sum() == 0 else 0.0
    iou = _histogram_iou(truth.astype(float), guess.astype(float))
    return np.mean([iou > t for t in np.arange(0.5, 1.0, 0.05)])


def test_iou_sweep_against_histogram_iou_per_image(rng):
    truths = _blobs(rng, 60, 101, 101)
    guesses = [t ^ (rng.random(t.shape) < 0.02 * k % 7) for k, t in enumerate(truths)]
    guesses[1] = np.zeros((101, 101), dtype=bool)  # empty prediction on salt
    truths[2] = np.ones((101, 101), dtype=bool)
    truths[3][:, :60] = True  # salt over half the image
    guesses[3] = np.zeros((101, 101), dtype=bool)
    expected = np.mean([_tgs_reference(t, g) for t, g in zip(truths, guesses, strict=True)])
    got = get_metric("iou-sweep-rle").fn(np.array([encode(m) for m in truths]), np.array([encode(m) for m in guesses]))
    assert got == pytest.approx(expected) and 0 < got < 1


def test_an_empty_prediction_counts_as_the_whole_image_in_histogram_iou():
    truth = np.zeros((101, 101))
    truth[:, :70] = 1
    assert _histogram_iou(truth, np.zeros((101, 101))) == pytest.approx(70 / 101)
    assert get_metric("iou-sweep-rle").fn(np.array([encode(truth.astype(bool))]), np.array([""])) == 0.4  # > .5-.65


def _hausdorff_reference(truth, guess):
    """All-pairs distances on normalised (slice, row, column) coordinates, MLE-bench's shortcuts first."""
    if truth.sum() == 0 and guess.sum() == 0:
        return np.nan
    if np.array_equal(truth, guess):
        return 0.0
    if truth.sum() == 0 or guess.sum() == 0 or guess.sum() > 10 * truth.sum():
        return 1.0
    a, b = np.argwhere(truth) / truth.shape, np.argwhere(guess) / truth.shape
    d = cdist(a, b)
    return max(d.min(axis=1).max(), d.min(axis=0).max()) / np.sqrt(3)


def test_dice_hausdorff_against_pixel_volumes(rng):
    classes, days, slices, height, width = 3, ["case7_day1", "case7_day3", "case20_day0"], 4, 12, 10
    ids = [f"{d}_slice_{s:04d}" for d in days for s in range(1, slices + 1) for _ in range(classes)]
    truths = _blobs(rng, len(ids), height, width, empty_every=3)
    guesses = [t ^ (rng.random(t.shape) < 0.05) if k % 4 else t for k, t in enumerate(truths)]
    for k in range(slices * classes, 2 * slices * classes):  # the second day: nothing true, nothing predicted
        truths[k], guesses[k] = np.zeros((height, width), bool), np.zeros((height, width), bool)
    dices = [_dice(t, g, np.nan) for t, g in zip(truths, guesses, strict=True)]
    distances = []
    for d in range(len(days)):
        rows = range(d * slices * classes, (d + 1) * slices * classes)
        volume = [np.stack([np.logical_or.reduce([masks[r] for r in rows if ids[r].endswith(f"{s:04d}")])
                            for s in range(1, slices + 1)]) for masks in (truths, guesses)]
        distances.append(_hausdorff_reference(*volume))
    expected = 0.4 * np.nanmean(dices) + 0.6 * (1 - np.nanmean(distances))
    context = np.array([[i, f"{height}.0", f"{width}.0"] for i in ids], dtype=object)
    order = rng.permutation(len(ids))  # rows in any order: slices are grouped and sorted by id
    submission = np.column_stack([np.array(ids, dtype=object), [encode(m) for m in guesses]])
    got = get_metric("dice-hausdorff-3d").fn(np.array([encode(m) for m in truths])[order], submission[order],
                                             context[order])
    assert got == pytest.approx(expected) and 0 < got < 1

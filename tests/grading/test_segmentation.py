"""The segmentation competitions (run-length-encoded masks) graded through the engine on synthetic files
in each competition's real column format, against grade.py's steps on pixel arrays decoded pixel by
pixel (tests.grading.test_metric_rle), then numpy, scikit-learn or all-pairs distances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as sk

from leaderboard.competitions import medals
from leaderboard.grading import grader_for
from leaderboard.grading.specs_vision import SEGMENTATION
from tests.grading.test_metric_rle import _blobs, _dice, _hausdorff_reference, _tgs_reference, decode, encode
from tests.grading_support import (
    assert_direction_matches_humans,
    build_case,
    grade,
    sorted_by,
    with_human_leaderboard,
    write_files,
)


def _noisy(rng, masks, flip=0.03):
    return [m ^ (rng.random(m.shape) < flip) if k % 3 else m for k, m in enumerate(masks)]


def _hex(rng, n):
    return [f"{x:010x}" for x in rng.integers(0, 2**40, n)]


def _tgs():
    def build(rng):
        truths = _blobs(rng, 60, 101, 101)
        guesses = _noisy(rng, truths)
        guesses[4] = np.zeros((101, 101), dtype=bool)
        ans = pd.DataFrame({"id": _hex(rng, 60), "rle_mask": [encode(m) for m in truths]})
        return ans, pd.DataFrame({"id": ans["id"], "rle_mask": [encode(m) for m in guesses]})

    def expect(ans, sub):
        a, s = sorted_by("id")(ans.fillna(""), sub.fillna(""))
        return np.mean([_tgs_reference(decode(t, 101, 101), decode(g, 101, 101))
                        for t, g in zip(a["rle_mask"], s["rle_mask"], strict=True)])

    return build, expect


def _hubmap():
    def build(rng):
        shapes = [(90, 120), (150, 70), (64, 64), (100, 101)]
        truths = [_blobs(rng, 3, h, w, empty_every=99)[1] | _blobs(rng, 3, h, w, empty_every=99)[2] for h, w in shapes]
        ans = pd.DataFrame({"id": ["2f6ecfcdf", "aaa6a05cc", "cb2d976f4", "0486052bb"],
                            "encoding": [encode(m) for m in truths],
                            "width_pixels": [w for _, w in shapes], "height_pixels": [h for h, _ in shapes]})
        return ans, pd.DataFrame({"id": ans["id"], "predicted": [encode(m) for m in _noisy(rng, truths, 0.1)]})

    def expect(ans, sub):
        a, s = sorted_by("id")(ans, sub.fillna(""))
        return np.mean([_dice(decode(t, h, w), decode(g, h, w), 1.0) for t, g, h, w in
                        zip(a["encoding"], s["predicted"], a["height_pixels"], a["width_pixels"], strict=True)])

    return build, expect


def _contrails():
    def build(rng):
        truths = _blobs(rng, 40, 32, 32, empty_every=3)
        ans = pd.DataFrame({"record_id": rng.integers(10**18, 9 * 10**18, 40),
                            "encoded_pixels": [encode(m) or "-" for m in truths], "height": 32, "width": 32})
        return ans, pd.DataFrame({"record_id": ans["record_id"],
                                  "encoded_pixels": [encode(m) or "-" for m in _noisy(rng, truths)]})

    def expect(ans, sub):
        a, s = sorted_by("record_id")(ans, sub)
        t = np.concatenate([decode("" if x == "-" else x, 32, 32) for x in a["encoded_pixels"]])
        g = np.concatenate([decode("" if x == "-" else x, 32, 32) for x in s["encoded_pixels"]])
        return _dice(t, g, np.nan)

    return build, expect


def _vesuvius():
    shapes = [(70, 90), (50, 40)]

    def build(rng):
        truths = [_blobs(rng, 2, h, w, empty_every=99)[1] for h, w in shapes]
        rows = [encode(m.T) for m in truths]  # Vesuvius' runs go along rows
        ans = pd.DataFrame({"Id": ["a", "b"], "Predicted": rows, "width": [w for _, w in shapes],
                            "height": [h for h, _ in shapes]})
        return ans, pd.DataFrame({"Id": ["a", "b"], "Predicted": [encode(m.T) for m in _noisy(rng, truths, 0.2)]})

    def expect(ans, sub):  # row by row in file order
        return np.mean([sk.fbeta_score(decode(t, w, h).T.ravel(), decode(g, w, h).T.ravel(), beta=0.5)
                        for t, g, h, w in zip(ans["Predicted"], sub["Predicted"], ans["height"], ans["width"],
                                              strict=True)])

    return build, expect


def _uw():
    days, slices, classes, height, width = ["case101_day20", "case9_day0", "case77_day26"], 4, 3, 40, 32
    names = ["large_bowel", "small_bowel", "stomach"]

    def build(rng):
        ids = [f"{d}_slice_{s:04d}" for d in days for s in range(1, slices + 1) for _ in range(classes)]
        truths = _blobs(rng, len(ids), height, width, empty_every=4)
        ans = pd.DataFrame({"id": ids, "class": names * (len(ids) // classes),
                            "predicted": [encode(m) for m in truths],
                            "image_height": float(height), "image_width": float(width)})
        return ans, pd.DataFrame({"id": ids, "class": ans["class"],
                                  "predicted": [encode(m) for m in _noisy(rng, truths, 0.08)]})

    def expect(ans, sub):  # grade.py: rows by position, slices OR-ed per case and day
        truths = [decode(x, height, width) for x in ans["predicted"].fillna("")]
        guesses = [decode(x, height, width) for x in sub["predicted"].fillna("")]
        dices = [_dice(t, g, np.nan) for t, g in zip(truths, guesses, strict=True)]
        distances = []
        for day in sorted(set(i.split("_slice_")[0] for i in ans["id"])):
            volume = []
            for masks, ids in ((truths, ans["id"]), (guesses, sub["id"])):  # each file grouped by its own ids
                by_slice = {}
                for slice_id, mask in zip(ids, masks, strict=True):
                    if slice_id.startswith(day + "_"):
                        by_slice[slice_id] = by_slice.get(slice_id, np.zeros_like(mask)) | mask
                volume.append(np.stack([by_slice[k] for k in sorted(by_slice)]))
            distances.append(_hausdorff_reference(*volume))
        return 0.4 * np.nanmean(dices) + 0.6 * (1 - np.nanmean(distances))

    return build, expect


CASES = {
    "tgs-salt-identification-challenge": _tgs(),
    "hubmap-kidney-segmentation": _hubmap(),
    "google-research-identify-contrails-reduce-global-warming": _contrails(),
    "vesuvius-challenge-ink-detection": _vesuvius(),
    "uw-madison-gi-tract-image-segmentation": _uw(),
}
SLUGS = sorted(CASES)
IN_ORDER = {"vesuvius-challenge-ink-detection", "uw-madison-gi-tract-image-segmentation"}  # rows by position


def _files(tmp_path, slug, ans, sub, rng=None):
    return write_files(tmp_path, ans, sub, None if slug in IN_ORDER else rng)


def test_every_spec_here_has_a_case():
    assert sorted(spec.competition_id for spec in SEGMENTATION) == SLUGS


@pytest.mark.parametrize("slug", SLUGS)
def test_scores_like_an_independent_computation(catalogue, slug, tmp_path):
    ans, sub, expect, rng = build_case(CASES, slug)
    answers, submission = _files(tmp_path, slug, ans, sub, rng)
    expected = expect(pd.read_csv(answers, keep_default_na=False), pd.read_csv(submission, keep_default_na=False))

    report = grade(slug, submission, answers)

    assert report.error is None, report.error
    assert report.score == medals.round_score(expected)
    assert 0 < report.score < 1


@pytest.mark.parametrize("slug", SLUGS)
def test_the_answers_themselves_score_one(catalogue, slug, tmp_path):
    ans, _, _, rng = build_case(CASES, slug)
    spec = grader_for(slug)
    target = (spec.submission_targets or spec.target_columns)[-1]
    perfect = ans.rename(columns={spec.target_columns[0]: target})[
        list(dict.fromkeys([spec.id_column, *spec.required_columns, target]))]
    report = grade(slug, *reversed(_files(tmp_path, slug, ans, perfect, rng)))
    assert report.error is None and report.score == 1.0


@pytest.mark.parametrize("slug", SLUGS)
def test_a_missing_row_is_rejected(catalogue, slug, tmp_path):
    ans, sub, _, _ = build_case(CASES, slug)
    report = grade(slug, *reversed(_files(tmp_path, slug, ans, sub.iloc[1:])))
    assert report.score is None
    if slug == "uw-madison-gi-tract-image-segmentation":
        assert f"wrong number of rows: the submission has {len(sub) - 1}, expected {len(sub)}" in report.error
    else:
        assert f"1 {grader_for(slug).id_column!r} value(s) of the test set are missing: " in report.error


@pytest.mark.parametrize("slug", SLUGS)
@pytest.mark.parametrize(("mask", "message"), [("9 3 1 2", "must be sorted by start"), ("1 4 2 2", "runs overlap"),
                                               ("5 x", "not whole numbers")])
def test_a_malformed_mask_is_rejected(catalogue, slug, tmp_path, mask, message):
    ans, sub, _, _ = build_case(CASES, slug)
    target = sub.columns[-1]
    sub.loc[1, target] = mask
    report = grade(slug, *reversed(_files(tmp_path, slug, ans, sub)))
    assert report.score is None and message in report.error, report.error


@pytest.mark.parametrize("slug", with_human_leaderboard(SLUGS))
def test_direction_agrees_with_the_human_leaderboard(catalogue, slug):
    assert_direction_matches_humans(catalogue.get(slug=slug), grader_for(slug).lower_is_better)


def test_tgs_requires_exactly_id_and_rle_mask(catalogue, tmp_path):
    ans, sub, _, _ = build_case(CASES, "tgs-salt-identification-challenge")
    report = grade("tgs-salt-identification-challenge", *reversed(write_files(tmp_path, ans, sub.assign(depth=1))))
    assert report.score is None and "unexpected column(s) 'depth'" in report.error


def test_contrails_rejects_an_empty_cell_and_takes_a_dash(catalogue, tmp_path):
    slug = "google-research-identify-contrails-reduce-global-warming"
    ans, sub, _, _ = build_case(CASES, slug)
    report = grade(slug, *reversed(write_files(tmp_path, ans, sub.assign(encoded_pixels="-"))))
    assert report.error is None and report.score == 0.0
    sub.loc[2, "encoded_pixels"] = ""
    report = grade(slug, *reversed(write_files(tmp_path, ans, sub)))
    assert report.score is None and "column 'encoded_pixels' has 1 empty or missing" in report.error


def test_vesuvius_rejects_rows_out_of_the_answers_order(catalogue, tmp_path):
    ans, sub, _, _ = build_case(CASES, "vesuvius-challenge-ink-detection")
    report = grade("vesuvius-challenge-ink-detection", *reversed(write_files(tmp_path, ans, sub.iloc[::-1])))
    assert report.score is None
    assert "rows are not in the test set's order: row 1 has 'Id' 'b', expected 'a'" in report.error


def test_uw_madison_pairs_rows_by_position_and_says_so(catalogue, tmp_path):
    ans, sub, expect, rng = build_case(CASES, "uw-madison-gi-tract-image-segmentation")
    shuffled = sub.iloc[rng.permutation(len(sub))]
    report = grade("uw-madison-gi-tract-image-segmentation", *reversed(write_files(tmp_path, ans, shuffled)))
    assert report.score == medals.round_score(expect(ans, shuffled.reset_index(drop=True)))
    assert any("MLE-bench scores rows by position" in note for note in report.notes)


def test_hubmap_reads_an_empty_cell_as_an_empty_mask(catalogue, tmp_path):
    ans, sub, expect, _ = build_case(CASES, "hubmap-kidney-segmentation")
    sub.loc[0, "predicted"] = ""
    report = grade("hubmap-kidney-segmentation", *reversed(write_files(tmp_path, ans, sub)))
    assert report.score == medals.round_score(expect(ans, sub)) and report.score < 1


def test_a_malformed_answers_mask_is_an_operator_error_that_quotes_nothing(catalogue, tmp_path):
    ans, sub, _, _ = build_case(CASES, "tgs-salt-identification-challenge")
    ans.loc[0, "rle_mask"] = "97 3 11 2"
    report = grade("tgs-salt-identification-challenge", *reversed(write_files(tmp_path, ans, sub)))
    assert report.score is None and report.grading_available is False
    assert "internal grading error" in report.error and "97 3" not in report.error

"""Competitions graded from MLE-bench's own grade.py (beyond Lite), end to end on synthetic files in
each competition's real column format, against an independent computation that follows grade.py:
pandas sort by id, then scikit-learn / scipy / numpy."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn import metrics as sk

from leaderboard.competitions import medals
from leaderboard.grading import grader_for
from leaderboard.grading.specs import GOOGLE_QUEST_CLASSES, LABELS_AND_COLUMNS
from tests.grading_support import (
    assert_direction_matches_humans,
    build_case,
    grade,
    labels_case,
    sorted_by,
    write_files,
)

N = 300
SPECIES = ["Black-grass", "Charlock", "Cleavers", "Common Chickweed", "Common wheat", "Fat Hen",
           "Loose Silky-bent", "Maize", "Scentless Mayweed", "Shepherds Purse", "Small-flowered Cranesbill",
           "Sugar beet"]
LMSYS = ["winner_model_a", "winner_model_b", "winner_tie"]


def _hex(rng, n, width):
    return [f"{x:016x}"[:width] for x in rng.integers(0, 2**62, n)]


def _uuids(rng):
    return [f"{a}-{b[:4]}-11ea-{b[4:8]}-{c}" for a, b, c in zip(_hex(rng, N, 8), _hex(rng, N, 8), _hex(rng, N, 12),
                                                                 strict=True)]


def _ints(rng):
    return rng.permutation(10**6)[:N]


_sorted = sorted_by


_labels = functools.partial(labels_case, n=N)


def _macro_f1(y_true, y_pred):  # grade.py: int() of every label, then sklearn macro F1
    return sk.f1_score([int(y) for y in y_true], [int(y) for y in y_pred], average="macro")


def _inaturalist():
    build_labels, _ = _labels("id", "predicted", _ints, np.arange(40), None)

    def build(rng):
        ans, sub = build_labels(rng)
        top5 = [f"{p} {' '.join(map(str, rng.integers(0, 40, 4)))}" for p in sub["predicted"]]
        sub["predicted"] = np.where(rng.random(N) < 0.5, top5, sub["predicted"].astype(str))
        return ans, sub

    def expect(ans, sub):
        a, s = _sorted("id")(ans, sub)
        guess = [int(y) if isinstance(y, int) else int(y.split()[0]) for y in s["predicted"]]
        return 1 - sk.accuracy_score([int(y) for y in a["predicted"]], guess)

    return build, expect


def _lmsys():
    def build(rng):
        onehot = np.eye(3)[rng.integers(0, 3, N)]
        ans = pd.DataFrame({"id": _ints(rng), "model_a": "gpt-4-0613", "model_b": "llama-2-70b-chat",
                            "prompt": '["What is 2+2?\\nExplain, \\"briefly\\"."]', "response_a": '["4"]',
                            "response_b": '["Four"]'})
        ans[LMSYS] = onehot.astype(int)
        p = onehot * 0.6 + rng.random(onehot.shape)
        sub = pd.DataFrame(p / p.sum(axis=1, keepdims=True), columns=LMSYS)
        sub.insert(0, "id", ans["id"])
        return ans, sub

    def expect(ans, sub):
        a, s = _sorted("id")(ans, sub)
        return sk.log_loss(a[LMSYS].to_numpy(), s[LMSYS].to_numpy())

    return build, expect


def _google_quest():
    classes = list(GOOGLE_QUEST_CLASSES)

    def build(rng):
        y = rng.integers(0, 4, (N, len(classes))) / 3
        ans = pd.DataFrame(y, columns=classes)
        ans.insert(0, "qa_id", _ints(rng))
        sub = pd.DataFrame(np.clip(y * 0.5 + rng.random(y.shape) * 0.5, 0, 1), columns=classes)
        sub.insert(0, "qa_id", ans["qa_id"])
        return ans, sub

    def expect(ans, sub):
        a, s = _sorted("qa_id")(ans, sub)
        return np.mean([stats.spearmanr(s[c], a[c]).correlation for c in classes])

    return build, expect


def _s3e18():
    def build(rng):
        y = rng.integers(0, 2, (N, 6))
        ans = pd.DataFrame({"id": _ints(rng), "BertzCT": rng.random(N) * 500, "fr_COO": rng.integers(0, 3, N)})
        ans[[f"EC{k}" for k in range(1, 7)]] = y
        sub = pd.DataFrame({"id": ans["id"], "EC1": y[:, 0] + rng.normal(0, 1, N),  # scores, not probabilities
                            "EC2": y[:, 1] * 0.3 + rng.random(N)})
        return ans, sub

    def expect(ans, sub):
        a, s = _sorted("id")(ans, sub)
        return sk.roc_auc_score(a[["EC1", "EC2"]].to_numpy(), s[["EC1", "EC2"]].to_numpy(), average="macro")

    return build, expect


def _nfl_ids(rng):
    return [f"58168_003392_{s}_{a}_{b}" for s, a, b in zip(rng.permutation(10**5)[:N], rng.integers(30000, 50000, N),
                                                           rng.integers(30000, 50000, N), strict=True)]


def _angles(frame):
    return [frame[c].to_numpy() for c in ("azimuth", "zenith")]


def _icecube():
    def build(rng):
        az, zen = rng.random(N) * 2 * np.pi, rng.random(N) * np.pi
        ans = pd.DataFrame({"event_id": _ints(rng), "azimuth": az, "zenith": zen})
        sub = pd.DataFrame({"event_id": ans["event_id"], "azimuth": az + rng.normal(0, 0.5, N),
                            "zenith": zen + rng.normal(0, 0.5, N)})
        return ans, sub

    def expect(ans, sub):  # the host's angular_dist_score, as grade.py computes it
        a, s = _sorted("event_id")(ans, sub)
        (az1, zen1), (az2, zen2) = _angles(a), _angles(s)
        dot = np.sin(zen1) * np.sin(zen2) * (np.cos(az1) * np.cos(az2) + np.sin(az1) * np.sin(az2))
        dot += np.cos(zen1) * np.cos(zen2)
        return np.mean(np.abs(np.arccos(np.clip(dot, -1, 1))))

    return build, expect


def _alaska_reference(y_true, y_pred):
    """grade.py's steps: ROC curve, a vertex inserted at each TPR bound, sklearn auc per band."""
    bounds, weights = [0.0, 0.4, 1.0], [2, 1]
    fpr, tpr, _ = sk.roc_curve(y_true, y_pred, pos_label=1)
    fpr, tpr = fpr.tolist(), tpr.tolist()
    for bound in bounds:
        if bound in tpr:
            continue
        i = next(k for k, t in enumerate(tpr) if t > bound)
        fpr.insert(i, fpr[i - 1] + (fpr[i] - fpr[i - 1]) * (bound - tpr[i - 1]) / (tpr[i] - tpr[i - 1]))
        tpr.insert(i, bound)
    fpr, tpr = np.array(fpr), np.array(tpr)
    total = 0.0
    for k, weight in enumerate(weights):
        low, high = bounds[k], bounds[k + 1]
        mask = (low <= tpr) & (tpr <= high)
        total += weight * sk.auc(np.concatenate([fpr[mask], [1]]), np.concatenate([tpr[mask], [high]]) - low)
    return total / np.dot(np.diff(bounds), weights)


def _alaska():
    def build(rng):
        y = rng.integers(0, 2, N)
        ans = pd.DataFrame({"Id": [f"{k:04d}.jpg" for k in range(1, N + 1)], "Label": y})
        return ans, pd.DataFrame({"Id": ans["Id"], "Label": np.round(y * 0.4 + rng.random(N) * 2, 2)})  # ties

    def expect(ans, sub):
        a, s = _sorted("Id")(ans, sub)
        return _alaska_reference(a["Label"].to_numpy(float), s["Label"].to_numpy(float))

    return build, expect


def _stanford():
    scored = ["reactivity", "deg_Mg_pH10", "deg_Mg_50C"]
    targets = ["reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C"]

    def build(rng):
        seqs = _hex(rng, 5, 9)
        ids = [f"id_{seq}_{pos}" for seq in seqs for pos in range(N // 5)]
        y = rng.random((N, 5)) * 2
        ans = pd.DataFrame(y, columns=targets)
        ans.insert(0, "id_seqpos", ids)
        ans["keep"] = np.tile(np.arange(N // 5) < 40, 5)  # positions past seq_scored are not scored
        sub = pd.DataFrame(y + rng.normal(0, 0.3, y.shape), columns=targets)
        sub.insert(0, "id_seqpos", ids)
        sub.loc[~ans["keep"], scored] += 50  # far off where not scored: must not count
        return ans, sub

    def expect(ans, sub):
        a, s = _sorted("id_seqpos")(ans, sub)
        keep = a["keep"].to_numpy()
        return np.mean([sk.root_mean_squared_error(a[c][keep], s[c][keep]) for c in scored])

    return build, expect


CASES = {
    "cassava-leaf-disease-classification": _labels("image_id", "label", lambda rng: [f"{x}.jpg" for x in _ints(rng)],
                                                   np.arange(5), sk.accuracy_score),
    "cdiscount-image-classification-challenge": _labels("_id", "category_id", _ints, 1000010653 + np.arange(50),
                                                        sk.accuracy_score),
    "iwildcam-2020-fgvc7": _labels("Id", "Category", _uuids, np.arange(676), sk.accuracy_score),
    "ml2021spring-hw2": _labels("Id", "ClassId", lambda rng: rng.permutation(N), np.arange(39), sk.accuracy_score),
    "herbarium-2021-fgvc8": _labels("Id", "Predicted", lambda rng: rng.permutation(N), np.arange(60), _macro_f1),
    "herbarium-2022-fgvc9": _labels("Id", "Predicted", lambda rng: rng.permutation(N), np.arange(80), _macro_f1),
    "iwildcam-2019-fgvc6": _labels("Id", "Category", _uuids, np.arange(23), _macro_f1),
    "plant-seedlings-classification": _labels("file", "species", lambda rng: [f"{h}.png" for h in _hex(rng, N, 9)],
                                              SPECIES, lambda t, p: sk.f1_score(t, p, average="micro")),
    "inaturalist-2019-fgvc6": _inaturalist(),
    "lmsys-chatbot-arena": _lmsys(),
    "google-quest-challenge": _google_quest(),
    "playground-series-s3e18": _s3e18(),
    "nfl-player-contact-detection": _labels("contact_id", "contact", _nfl_ids, [0, 0, 0, 1], sk.matthews_corrcoef),
    "icecube-neutrinos-in-deep-ice": _icecube(),
    "alaska2-image-steganalysis": _alaska(),
    "stanford-covid-vaccine": _stanford(),
}
SLUGS = sorted(CASES)


def test_every_mle_bench_spec_has_a_case():
    assert sorted(spec.competition_id for spec in LABELS_AND_COLUMNS) == SLUGS



def _build(slug):
    return build_case(CASES, slug)


@pytest.mark.parametrize("slug", SLUGS)
def test_scores_like_an_independent_computation(catalogue, slug, tmp_path):
    ans, sub, expect, rng = _build(slug)
    answers, submission = write_files(tmp_path, ans, sub, rng)  # shuffled: every one of these sorts by id
    expected = expect(pd.read_csv(answers), pd.read_csv(submission))  # read as MLE-bench reads them

    report = grade(slug, submission, answers)

    assert report.error is None, report.error
    assert report.valid_submission
    assert report.score == medals.round_score(expected)
    assert 0 < abs(report.score) < 1  # a real, partial score: not a degenerate 0 or 1


@pytest.mark.parametrize("slug", SLUGS)
def test_a_missing_row_is_rejected(catalogue, slug, tmp_path):
    ans, sub, _, _ = _build(slug)
    answers, submission = write_files(tmp_path, ans, sub.iloc[1:])
    report = grade(slug, submission, answers)
    assert not report.valid_submission and report.score is None
    if grader_for(slug).alignment == "sort-by-id-unchecked":
        assert f"wrong number of rows: the submission has {N - 1}, expected {N}" in report.error
    else:
        id_col = grader_for(slug).id_column
        assert f"1 {id_col!r} value(s) of the test set are missing: " in report.error


@pytest.mark.parametrize("slug", SLUGS)
def test_a_misnamed_prediction_column_is_rejected(catalogue, slug, tmp_path):
    ans, sub, _, _ = _build(slug)
    target = grader_for(slug).target_columns[0]
    answers, submission = write_files(tmp_path, ans, sub.rename(columns={target: target.upper() + "_"}))
    report = grade(slug, submission, answers)
    assert report.score is None and f"missing column(s) {target!r}" in report.error


@pytest.mark.parametrize("slug", SLUGS)
def test_direction_agrees_with_the_human_leaderboard(catalogue, slug):
    assert_direction_matches_humans(catalogue.get(slug=slug), grader_for(slug).lower_is_better)


def _variant(slug, tmp_path, change):
    ans, sub, _, _ = _build(slug)
    answers, submission = write_files(tmp_path, ans, change(sub.copy()))
    return grade(slug, submission, answers)


def _set(column, row, value):
    def change(sub):
        sub[column] = sub[column].astype(object)
        sub.iloc[row, sub.columns.get_loc(column)] = value
        return sub
    return change


@pytest.mark.parametrize("slug,change,fragment", [
    ("inaturalist-2019-fgvc6", _set("predicted", 3, "cat 12"), "prediction 'cat 12' does not start with an integer"),
    ("inaturalist-2019-fgvc6", _set("predicted", 3, "12.0"), "prediction '12.0' does not start with an integer"),
    ("lmsys-chatbot-arena", _set("winner_tie", 0, 0.5), "row(s) of probabilities do not sum to 1 (row 1 sums to"),
    ("lmsys-chatbot-arena", lambda s: s.assign(winner_tie=s["winner_tie"] + 2e-6),
     f"{N} row(s) of probabilities do not sum to 1"),
    ("icecube-neutrinos-in-deep-ice", lambda s: s.assign(batch_id=1), "unexpected column(s) 'batch_id'"),
    ("icecube-neutrinos-in-deep-ice", _set("zenith", 4, "inf"), "column 'zenith' has 1 infinite value(s) (row 5"),
    ("google-quest-challenge", lambda s: s.assign(extra=0.5), "unexpected column(s) 'extra'"),
    ("nfl-player-contact-detection", _set("contact", 2, 0.7),
     "column 'contact' has 1 non-integer value(s); expected whole numbers (row 3: 0.7)"),
    ("alaska2-image-steganalysis", _set("Label", 0, "stego"), "column 'Label' has 1 non-numeric value(s) (row 1"),
    ("herbarium-2021-fgvc8", lambda s: pd.concat([s, s.iloc[:1]]), "duplicate 'Id' value(s)"),
    ("stanford-covid-vaccine", lambda s: s.drop(columns="deg_pH10"), "missing column(s) 'deg_pH10'"),
])
def test_competition_specific_malformed_submissions(catalogue, slug, change, fragment, tmp_path):
    report = _variant(slug, tmp_path, change)
    assert report.score is None and not report.valid_submission
    assert fragment in report.error, report.error


def test_lmsys_accepts_rows_that_round_to_one_at_six_decimals(catalogue, tmp_path):
    report = _variant("lmsys-chatbot-arena", tmp_path, lambda s: s.assign(winner_tie=s["winner_tie"] + 4e-7))
    assert report.valid_submission, report.error


def test_google_quest_scores_unmatched_ids_by_sorted_position_like_mle_bench(catalogue, tmp_path):
    """MLE-bench never compares qa_id here: ids shifted by one still score, row by row after sorting
    (numerically, as pandas reads integer ids)."""
    ans, sub, expect, rng = _build("google-quest-challenge")
    sub["qa_id"] = sub["qa_id"] + 1
    answers, submission = write_files(tmp_path, ans, sub, rng)
    report = grade("google-quest-challenge", submission, answers)
    assert report.valid_submission, report.error
    assert report.score == medals.round_score(expect(pd.read_csv(answers), pd.read_csv(submission)))
    assert any("MLE-bench sorts both files by 'qa_id'" in note for note in report.notes)


def test_inaturalist_scores_only_the_first_of_five_guesses(catalogue, tmp_path):
    ans = pd.DataFrame({"id": [1, 2, 3, 4], "predicted": [7, 8, 9, 10]})
    sub = pd.DataFrame({"id": [4, 3, 2, 1], "predicted": ["10 1 2 3 4", "1 9 2 3 4", "8", "7"]})
    answers, submission = write_files(tmp_path, ans, sub)
    assert grade("inaturalist-2019-fgvc6", submission, answers).score == 0.25  # row 3 has 9 second: wrong

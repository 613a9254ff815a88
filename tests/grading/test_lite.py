"""Every MLE-bench Lite competition, graded end to end on synthetic files in its real format and
checked against an independent computation (pandas sort by id + scikit-learn), as MLE-bench does."""

from __future__ import annotations

import functools
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as sk

from leaderboard.competitions import medals
from leaderboard.grading import grade_submission, grading_available
from leaderboard.models import Competition, CompetitionAnswers
from tests.conftest import CATALOGUE_DIR
from tests.grading_support import labels_case, sorted_by, write_files

LITE = (CATALOGUE_DIR / "splits" / "low.txt").read_text().split()
N = 300


def _hex(rng, n, width):
    return [f"{x:0{width}x}"[:width] for x in rng.integers(0, 2**62, n)]


def _probs(rng, onehot, signal=0.5):
    p = onehot * signal + rng.random(onehot.shape)
    return p / p.sum(axis=1, keepdims=True)


def _noisy(rng, y):
    return np.clip(0.4 * y + 0.6 * rng.random(len(y)), 0, 1)


def _auc_case(id_col, target, ids, **extra_answers):
    def build(rng):
        y = rng.integers(0, 2, N)
        ans = pd.DataFrame({id_col: ids(rng), target: y, **{k: f(rng) for k, f in extra_answers.items()}})
        sub = pd.DataFrame({id_col: ans[id_col], target: _noisy(rng, y)})
        return ans, sub

    def expect(ans, sub):
        a, s = ans.sort_values(id_col), sub.sort_values(id_col)
        return sk.roc_auc_score(a[target], s[target])

    return build, expect


_sorted = sorted_by


def _multiclass(id_col, classes, ids):
    def build(rng):
        onehot = np.eye(len(classes))[rng.integers(0, len(classes), N)]
        ans = pd.DataFrame(onehot.astype(int), columns=classes)
        ans.insert(0, id_col, ids(rng))
        sub = pd.DataFrame(_probs(rng, onehot), columns=classes)
        sub.insert(0, id_col, ans[id_col])
        return ans, sub[[id_col, *reversed(classes)]]  # column order must not matter

    def expect(ans, sub):
        a, s = _sorted(id_col)(ans, sub)
        return sk.log_loss(a[classes].to_numpy(), s[classes].to_numpy())

    return build, expect


def _columnwise_auc(id_col, classes, ids, answers_only=()):
    def build(rng):
        y = rng.integers(0, 2, (N, len(classes)))
        ans = pd.DataFrame(y, columns=classes)
        ans.insert(0, id_col, ids(rng))
        for column in answers_only:
            ans[column] = rng.integers(0, 2, N)
        sub = pd.DataFrame(np.clip(0.3 * y + 0.7 * rng.random(y.shape), 0, 1), columns=classes)
        sub.insert(0, id_col, ans[id_col])
        return ans, sub

    def expect(ans, sub):
        a, s = _sorted(id_col)(ans, sub)
        return sk.roc_auc_score(a[classes].to_numpy(), s[classes].to_numpy(), average="macro")

    return build, expect


def _regression(id_col, target, ids, scale=1.0):
    def build(rng):
        y = rng.random(N) * scale
        ans = pd.DataFrame({id_col: ids(rng), target: y})
        return ans, pd.DataFrame({id_col: ans[id_col], target: y + rng.normal(0, 0.1 * scale, N)})

    def expect(ans, sub):
        a, s = _sorted(id_col)(ans, sub)
        return sk.root_mean_squared_error(a[target], s[target])

    return build, expect


_labels = functools.partial(labels_case, n=N)


def _jigsaw():
    classes = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    build_auc, _ = _columnwise_auc("id", classes, lambda rng: _hex(rng, N, 16))

    def build(rng):
        ans, sub = build_auc(rng)
        ans.loc[rng.random(N) < 0.2, classes] = -1  # not scored, as in the real test labels
        return ans, sub

    def expect(ans, sub):
        a, s = _sorted("id")(ans, sub)
        scored = (a[classes] != -1).all(axis=1).to_numpy()
        return sk.roc_auc_score(a[classes].to_numpy()[scored], s[classes].to_numpy()[scored], average="macro")

    return build, expect


def _insults():
    comments = [f'"comment {k}, with ""quotes""\nand a newline"' for k in range(N - 20)]

    def build(rng):
        texts = comments + comments[:20]  # repeated comments, as in the real data
        y = rng.integers(0, 2, N - 20)
        y = np.concatenate([y, y[:20]])
        ans = pd.DataFrame({"Insult": y, "Date": "20120603163526Z", "Comment": texts, "Usage": "PrivateTest"})
        return ans, pd.DataFrame({"Insult": _noisy(rng, y), "Date": ans["Date"], "Comment": texts})

    def expect(ans, sub):
        a, s = _sorted("Comment")(ans, sub)
        return sk.roc_auc_score(a["Insult"], s["Insult"])

    return build, expect


def _taxi():
    def build(rng):
        keys = [f"2015-01-{d:02d} 12:{m:02d}:00.000000{k}" for d, m, k in
                zip(rng.integers(1, 28, N), rng.integers(0, 60, N), range(N), strict=True)]
        fare = rng.random(N) * 50
        ans = pd.DataFrame({"key": keys, "fare_amount": fare, "pickup_datetime": "2015-01-01 00:00:00 UTC",
                            "pickup_longitude": -73.9, "pickup_latitude": 40.7, "dropoff_longitude": -73.95,
                            "dropoff_latitude": 40.75, "passenger_count": 1})
        return ans, pd.DataFrame({"key": keys, "fare_amount": fare + rng.normal(0, 3, N)})

    def expect(ans, sub):
        a, s = _sorted("key")(ans, sub)
        return sk.root_mean_squared_error(a["fare_amount"], s["fare_amount"])

    return build, expect


def _nomad():
    targets = ["formation_energy_ev_natom", "bandgap_energy_ev"]

    def build(rng):
        y = rng.random((N, 2)) * [0.5, 5]
        ans = pd.DataFrame({"id": np.arange(1, N + 1), "spacegroup": 206, "number_of_total_atoms": 80.0,
                            "percent_atom_al": 0.5, "lattice_vector_1_ang": 9.9})
        ans[targets] = y
        sub = pd.DataFrame({"id": ans["id"], targets[0]: np.abs(y[:, 0] + rng.normal(0, .05, N)),
                            targets[1]: np.abs(y[:, 1] + rng.normal(0, .3, N))})
        return ans, sub

    def expect(ans, sub):  # by position, no sort: MLE-bench's rule here
        return np.mean([sk.root_mean_squared_log_error(ans[t], sub[t]) for t in targets])

    return build, expect


def _text():
    words = ["one", "two", "NA", "null", "", "1,000", 'say "hi"', "nan", "sil", "ё"]

    def build(rng):
        ids = [f"{s}_{t}" for s, t in zip(rng.integers(0, 10**6, N), rng.integers(0, 30, N), strict=True)]
        after = rng.choice(words, N)
        guess = np.where(rng.random(N) < 0.7, after, rng.choice(words, N))
        return pd.DataFrame({"id": ids, "after": after}), pd.DataFrame({"id": ids, "after": guess})

    def expect(ans, sub):
        a, s = _sorted("id")(ans, sub)
        # MLE-bench compares astype(str) under pandas 2, where every NaN read becomes the text 'nan'
        truth, guess = (f["after"].astype(object).fillna("nan").to_numpy() for f in (a, s))
        return float(np.mean(truth == guess))

    return build, expect


def _dogs_vs_cats():
    def build(rng):
        y = rng.integers(0, 2, N)
        ans = pd.DataFrame({"id": np.arange(1, N + 1), "label": y})
        return ans, pd.DataFrame({"id": ans["id"], "label": _noisy(rng, y)})

    def expect(ans, sub):
        a, s = _sorted("id")(ans, sub)
        return sk.log_loss(a["label"], s["label"])

    return build, expect


def _qwk(y, p):
    return sk.cohen_kappa_score(y, p, weights="quadratic")


def _ints(rng):
    return rng.permutation(10**6)[:N]


CASES = {
    "aerial-cactus-identification": _auc_case("id", "has_cactus", lambda rng: [f"{h}.jpg" for h in _hex(rng, N, 32)]),
    "aptos2019-blindness-detection": _labels("id_code", "diagnosis", lambda rng: _hex(rng, N, 12), [0, 1, 2, 3, 4],
                                             _qwk),
    "denoising-dirty-documents": _regression(
        "id", "value", lambda rng: [f"{i}_{r}_{c}" for i, r, c in zip(rng.integers(1, 200, N), range(N),
                                                                      rng.integers(1, 540, N), strict=True)]),
    "detecting-insults-in-social-commentary": _insults(),
    "dog-breed-identification": _multiclass("id", [f"breed_{k:03d}" for k in range(120)],
                                            lambda rng: _hex(rng, N, 32)),
    "dogs-vs-cats-redux-kernels-edition": _dogs_vs_cats(),
    "histopathologic-cancer-detection": _auc_case("id", "label", lambda rng: _hex(rng, N, 40)),
    "jigsaw-toxic-comment-classification-challenge": _jigsaw(),
    "leaf-classification": _multiclass("id", [f"Species_{k}" for k in range(99)], _ints),
    "mlsp-2013-birds": _auc_case("Id", "Probability", lambda rng: np.arange(N) // 19 * 100 + np.arange(N) % 19),
    "new-york-city-taxi-fare-prediction": _taxi(),
    "nomad2018-predict-transparent-conductors": _nomad(),
    "plant-pathology-2020-fgvc7": _columnwise_auc("image_id", ["healthy", "multiple_diseases", "rust", "scab"],
                                                  lambda rng: [f"Test_{k}" for k in rng.permutation(N)]),
    "random-acts-of-pizza": _auc_case("request_id", "requester_received_pizza",
                                      lambda rng: [f"t3_{h}" for h in _hex(rng, N, 6)]),
    "ranzcr-clip-catheter-line-classification": _columnwise_auc(
        "StudyInstanceUID",
        ["ETT - Abnormal", "ETT - Borderline", "ETT - Normal", "NGT - Abnormal", "NGT - Borderline",
         "NGT - Incompletely Imaged", "NGT - Normal", "CVC - Abnormal", "CVC - Borderline"],
        lambda rng: [f"1.2.826.0.1.3680043.8.498.{x}" for x in rng.permutation(10**8)[:N]],
        answers_only=("CVC - Normal", "Swan Ganz Catheter Present")),
    "siim-isic-melanoma-classification": _auc_case("image_name", "target",
                                                   lambda rng: [f"ISIC_{x:07d}" for x in rng.permutation(10**6)[:N]],
                                                   patient_id=lambda rng: "IP_0000000"),
    "spooky-author-identification": _multiclass("id", ["EAP", "HPL", "MWS"],
                                                lambda rng: [f"id{x:05d}" for x in rng.permutation(99999)[:N]]),
    "tabular-playground-series-dec-2021": _labels("Id", "Cover_Type", _ints, [1, 2, 3, 4, 5, 6, 7],
                                                  sk.accuracy_score),
    "tabular-playground-series-may-2022": _auc_case("id", "target", _ints, f_00=lambda rng: rng.random(N)),
    "text-normalization-challenge-english-language": _text(),
    "text-normalization-challenge-russian-language": _text(),
    "the-icml-2013-whale-challenge-right-whale-redux": _auc_case(
        "clip", "probability", lambda rng: [f"20090331_{x:06d}_{x % 60}s{x % 1000}ms_Test{k}.aif"
                                            for k, x in enumerate(rng.permutation(10**6)[:N])]),
}


def test_every_lite_competition_has_a_case_and_a_spec():
    assert sorted(CASES) == sorted(LITE)
    assert len(LITE) == 22
    assert all(grading_available(slug) for slug in LITE)


def _register(competition: Competition, path: Path) -> None:
    CompetitionAnswers.objects.update_or_create(competition=competition, defaults={"answers_path": str(path)})


@pytest.mark.django_db
@pytest.mark.parametrize("slug", LITE)
def test_lite_competition_scores_like_an_independent_computation(slug, tmp_path):
    rng = np.random.default_rng(zlib.crc32(slug.encode()))
    build, expect = CASES[slug]
    ans, sub = build(rng)
    shuffle = slug != "nomad2018-predict-transparent-conductors"  # compared by position there
    answers, submission = write_files(tmp_path, ans, sub, rng if shuffle else None)
    competition = Competition.objects.get(slug=slug)
    _register(competition, answers)
    expected = expect(pd.read_csv(answers), pd.read_csv(submission))  # read as MLE-bench reads them

    report = grade_submission(competition, submission)

    assert report.error is None, report.error
    assert report.valid_submission and report.submission_exists
    assert report.score == medals.round_score(expected)
    _check_medals(report, competition)


def _check_medals(report, competition: Competition) -> None:
    thresholds = competition.thresholds()
    awarded = medals.award(report.score, thresholds)
    assert (report.gold_medal, report.silver_medal, report.bronze_medal) == (awarded.gold, awarded.silver,
                                                                             awarded.bronze)
    assert report.any_medal == awarded.any and report.above_median == awarded.above_median
    if thresholds is None:
        assert report.human_rank is None and report.gold_threshold is None
        return
    assert report.gold_threshold == thresholds.gold and report.median_threshold == thresholds.median
    human = list(competition.human_scores.values_list("score", flat=True))
    assert report.human_rank == medals.place(report.score, human, report.is_lower_better).rank


@pytest.mark.django_db
@pytest.mark.parametrize("slug", LITE)
def test_perfect_submission_scores_the_best_value(slug, tmp_path):
    """The answers' own values as a submission: AUC/accuracy/kappa 1, errors 0 (log loss ~0)."""
    build, _ = CASES[slug]
    ans, sub = build(np.random.default_rng(1))
    columns = list(sub.columns)
    perfect = ans[columns].copy()
    if slug.startswith("jigsaw"):
        perfect = perfect.replace(-1, 0)
    shuffle = slug != "nomad2018-predict-transparent-conductors"
    answers, submission = write_files(tmp_path, ans, perfect, np.random.default_rng(2) if shuffle else None)
    competition = Competition.objects.get(slug=slug)
    report = grade_submission(competition, submission, answers)
    assert report.valid_submission, report.error
    assert report.score == (0.0 if report.is_lower_better else 1.0)

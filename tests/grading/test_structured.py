"""The structured competitions graded from MLE-bench's grade.py (specs_structured): end to end on
synthetic files in each competition's real column format, against an independent computation that
follows grade.py step by step (pandas sort by id, then loops, scipy or scikit-learn)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn import metrics as sk

from leaderboard.competitions import medals
from leaderboard.grading import grader_for
from leaderboard.grading.specs_structured import STRUCTURED
from tests.grading_support import (
    assert_direction_matches_humans,
    build_case,
    edit_distance,
    grade,
    labels_case,
    sorted_by,
    with_human_leaderboard,
    write_files,
)

N = 240
CERVICAL = ["patient_overall", *(f"C{k}" for k in range(1, 8))]
WORDS = ["InChI=1S/C13H20OS/c1-9(2)8-15-13-6-5-11(3)7-12(13)10(4)14/h5-7,9-10,14H,8H2,1-4H3",
         "InChI=1S/C21H30O4/c1-12(22)25-14-6-8-20(2)13(10-14)5-7-16-15(20)9-11-21(3)17(16)"]


def _hex(rng, n, width):
    return [f"{x:016x}"[:width] for x in rng.integers(0, 2**62, n)]


def _breast():
    def build(rng):
        ids = [f"{p}_{side}" for p in rng.permutation(60000)[:N // 2] for side in "LR"]
        cancer = (rng.random(N) < 0.15).astype(int)
        ans = pd.DataFrame({"prediction_id": ids, "cancer": cancer})
        return ans, pd.DataFrame({"prediction_id": ids, "cancer": np.round(cancer * 0.5 + rng.random(N) - 0.2, 4)})

    def expect(ans, sub):  # grade.py: sort by prediction_id, the host's pfbeta loop
        a, s = sorted_by("prediction_id")(ans, sub)
        count = ctp = cfp = 0.0
        for label, p in zip(a["cancer"], s["cancer"], strict=True):
            p = min(max(p, 0), 1)
            count, ctp, cfp = count + label, ctp + p * label, cfp + p * (1 - label)
        precision, recall = ctp / (ctp + cfp), ctp / count
        return 2 * precision * recall / (precision + recall)

    return build, expect


def _cervical():
    def build(rng):
        studies = [f"1.2.826.0.1.3680043.{k}" for k in rng.permutation(30000)[:N // 8]]
        ans = pd.DataFrame([(s, t) for s in studies for t in CERVICAL], columns=["StudyInstanceUID", "prediction_type"])
        ans["fractured"] = (rng.random(len(ans)) < 0.25).astype(int)
        ans["row_id"] = ans["StudyInstanceUID"] + "_" + ans["prediction_type"]
        p = np.clip(ans["fractured"] * 0.5 + rng.random(len(ans)) * 0.5, 0, 1).round(4)
        return ans, pd.DataFrame({"row_id": ans["row_id"], "fractured": p})

    def expect(ans, sub):  # grade.py: sort, unmelt per study, weighted loss per study, mean
        wide = {}
        for frame, name in ((ans, "y"), (sub, "p")):
            split = frame.assign(study=frame["row_id"].str.split("_", n=1).str[0],
                                 label=frame["row_id"].str.split("_", n=1).str[1])
            wide[name] = split.pivot(index="study", columns="label", values="fractured")[CERVICAL].sort_index()
        y, p = wide["y"].to_numpy(), np.clip(wide["p"].to_numpy(), 1e-15, 1 - 1e-15)
        w = np.where(y == 1, [14, 2, 2, 2, 2, 2, 2, 2], [7, 1, 1, 1, 1, 1, 1, 1])
        loss = -(y * np.log(p) + (1 - y) * np.log(1 - p))
        return np.mean((loss * w).sum(axis=1) / w.sum(axis=1))

    return build, expect


def _bms():
    def build(rng):
        truth = [rng.choice(WORDS)[: int(rng.integers(20, 80))] for _ in range(N)]
        guesses = []
        for t in truth:
            chars = list(t)
            for _ in range(int(rng.integers(0, 4))):
                chars[int(rng.integers(0, len(chars)))] = str(rng.integers(0, 9))
            guesses.append("".join(chars[: len(chars) - int(rng.integers(0, 3))]))
        ans = pd.DataFrame({"image_id": _hex(rng, N, 12), "InChI": truth})
        return ans, pd.DataFrame({"image_id": ans["image_id"], "InChI": guesses})

    def expect(ans, sub):
        a, s = sorted_by("image_id")(ans, sub)
        return np.mean([edit_distance(t, g) for t, g in zip(a["InChI"].astype(str), s["InChI"].astype(str),
                                                              strict=True)])

    return build, expect


def _ai4code():
    def build(rng):
        truth, orders = [], []
        for n in rng.integers(2, 40, N):
            cells = _hex(rng, int(n), 8)
            order = list(cells)
            for _ in range(int(rng.integers(0, n))):
                i, j = rng.integers(0, n, 2)
                order[i], order[j] = order[j], order[i]
            truth.append(" ".join(cells))
            orders.append(" ".join(order))
        ans = pd.DataFrame({"id": _hex(rng, N, 14), "cell_order": truth})
        return ans, pd.DataFrame({"id": ans["id"], "cell_order": orders})

    def expect(ans, sub):  # grade.py's summed inversions, counted here through scipy's tau per notebook
        a, s = sorted_by("id")(ans, sub)
        inversions = pairs = 0.0
        for t, o in zip(a["cell_order"], s["cell_order"], strict=True):
            cells, order = t.split(), o.split()
            n = len(cells)
            tau = stats.kendalltau(np.arange(n), [cells.index(c) for c in order]).statistic
            inversions, pairs = inversions + (1 - tau) * n * (n - 1) / 4, pairs + n * (n - 1)
        return 1 - 4 * inversions / pairs

    return build, expect


def _osic():
    def build(rng):
        patients = [f"ID00{k:07d}" for k in rng.permutation(10**6)[:N // 24]]
        ans = pd.DataFrame([(p, w) for p in patients for w in range(-4, 20)], columns=["Patient", "Weeks"])
        ans["FVC"] = np.where(rng.random(len(ans)) < 0.35, rng.normal(2600, 500, len(ans)).round(), np.nan)
        ans["Percent"], ans["Age"], ans["Sex"], ans["SmokingStatus"] = 70.5, 66, "Male", "Ex-smoker"
        ans["Patient_Week"] = ans["Patient"] + "_" + ans["Weeks"].astype(str)
        ans["Confidence"] = 100
        fvc = ans["FVC"].fillna(2500) + rng.normal(0, 300, len(ans)).round()
        sub = pd.DataFrame({"Patient_Week": ans["Patient_Week"], "FVC": fvc,
                            "Confidence": rng.uniform(30, 500, len(ans)).round(1)})
        return ans, sub

    def expect(ans, sub):  # grade.py: measured weeks, each patient's last three, sorted by Patient_Week
        kept = ans.dropna(subset=["FVC"]).sort_values("Weeks").groupby("Patient").tail(3)
        kept = kept.sort_values("Patient_Week")
        s = sub[sub["Patient_Week"].isin(kept["Patient_Week"])].sort_values("Patient_Week")
        sigma = np.maximum(s["Confidence"].to_numpy(), 70)
        delta = np.minimum(np.abs(kept["FVC"].to_numpy() - s["FVC"].to_numpy()), 1000)
        return np.mean(-np.sqrt(2) * delta / sigma - np.log(np.sqrt(2) * sigma))

    return build, expect


CASES = {
    "herbarium-2020-fgvc7": labels_case("Id", "Predicted", lambda rng: rng.permutation(10**6)[:N], np.arange(30),
                                        lambda a, s: sk.f1_score(a, s, average="macro"), N),
    "tensorflow-speech-recognition-challenge": labels_case(
        "fname", "label", lambda rng: [f"clip_{h}.wav" for h in _hex(rng, N, 9)],
        ["yes", "no", "up", "down", "silence", "unknown"], sk.accuracy_score, N),
    "rsna-breast-cancer-detection": _breast(),
    "rsna-2022-cervical-spine-fracture-detection": _cervical(),
    "bms-molecular-translation": _bms(),
    "AI4Code": _ai4code(),
    "osic-pulmonary-fibrosis-progression": _osic(),
}
SLUGS = sorted(CASES)
QA = "tensorflow2-question-answering"


def test_every_spec_here_has_a_case():
    assert sorted([*SLUGS, QA]) == sorted(spec.competition_id for spec in STRUCTURED)


@pytest.mark.parametrize("slug", SLUGS)
def test_scores_like_an_independent_computation(catalogue, slug, tmp_path):
    ans, sub, expect, rng = build_case(CASES, slug)
    answers, submission = write_files(tmp_path, ans, sub, rng)
    expected = expect(pd.read_csv(answers), pd.read_csv(submission))  # read as MLE-bench reads them

    report = grade(slug, submission, answers)

    assert report.error is None, report.error
    assert report.score == medals.round_score(expected)
    assert 0 < abs(report.score) < 10 and report.score not in (0.0, 1.0)  # a real, partial score


@pytest.mark.parametrize("slug", SLUGS)
def test_the_answers_themselves_score_best(catalogue, slug, tmp_path):
    ans, sub, _, _ = build_case(CASES, slug)
    spec = grader_for(slug)
    perfect = ans[[spec.id_column, *spec.target_columns]].copy()
    if slug == "osic-pulmonary-fibrosis-progression":
        perfect = perfect.assign(FVC=perfect["FVC"].fillna(2000), Confidence=70)
    report = grade(slug, *reversed(write_files(tmp_path, ans, perfect)))
    best = {"bms-molecular-translation": 0.0, "rsna-2022-cervical-spine-fracture-detection": 0.0,
            "osic-pulmonary-fibrosis-progression": medals.round_score(-math.log(math.sqrt(2) * 70))}
    assert report.error is None and report.score == best.get(slug, 1.0)


@pytest.mark.parametrize("slug", SLUGS)
def test_a_missing_row_is_rejected(catalogue, slug, tmp_path):
    ans, sub, _, _ = build_case(CASES, slug)
    report = grade(slug, *reversed(write_files(tmp_path, ans, sub.iloc[1:])))
    assert report.score is None
    assert f"1 {grader_for(slug).id_column!r} value(s) of the test set are missing: " in report.error


@pytest.mark.parametrize("slug", SLUGS)
def test_a_misnamed_prediction_column_is_rejected(catalogue, slug, tmp_path):
    ans, sub, _, _ = build_case(CASES, slug)
    spec = grader_for(slug)
    target = (spec.submission_targets or spec.target_columns)[-1]
    report = grade(slug, *reversed(write_files(tmp_path, ans, sub.rename(columns={target: target.lower() + "_"}))))
    assert report.score is None and f"missing column(s) {target!r}" in report.error


@pytest.mark.parametrize("slug", with_human_leaderboard(SLUGS))
def test_direction_agrees_with_the_human_leaderboard(catalogue, slug):
    assert_direction_matches_humans(catalogue.get(slug=slug), grader_for(slug).lower_is_better)


def test_cervical_rejects_probabilities_outside_zero_one(catalogue, tmp_path):
    ans, sub, _, _ = build_case(CASES, "rsna-2022-cervical-spine-fracture-detection")
    sub.loc[3, "fractured"] = 1.5
    report = grade("rsna-2022-cervical-spine-fracture-detection", *reversed(write_files(tmp_path, ans, sub)))
    assert report.score is None and "column 'fractured' has 1 value(s) outside [0, 1]" in report.error


def test_breast_accepts_scores_outside_zero_one_as_clipped(catalogue, tmp_path):
    ans, sub, expect, _ = build_case(CASES, "rsna-breast-cancer-detection")
    stretched = sub.assign(cancer=np.where(sub["cancer"] > 0.5, 7.0, sub["cancer"]))
    clipped = sub.assign(cancer=np.where(sub["cancer"] > 0.5, 1.0, sub["cancer"]))
    report = grade("rsna-breast-cancer-detection", *reversed(write_files(tmp_path, ans, stretched)))
    assert report.score == medals.round_score(expect(ans, clipped))


def test_ai4code_rejects_an_order_missing_a_cell(catalogue, tmp_path):
    ans, sub, _, _ = build_case(CASES, "AI4Code")
    sub.loc[5, "cell_order"] = " ".join(sub.loc[5, "cell_order"].split()[:-1])
    report = grade("AI4Code", *reversed(write_files(tmp_path, ans, sub)))
    assert report.score is None and "a cell_order must list each of the notebook's" in report.error


def test_bms_scores_a_missing_inchi_as_the_string_nan(catalogue, tmp_path):
    ans = pd.DataFrame({"image_id": ["a1", "b2"], "InChI": ["InChI=1S/H2O/h1H2", "nan"]})
    sub = pd.DataFrame({"image_id": ["a1", "b2"], "InChI": ["InChI=1S/H2O/h1H2", ""]})
    report = grade("bms-molecular-translation", *reversed(write_files(tmp_path, ans, sub)))
    assert report.score == 0.0


def test_osic_rejects_a_patient_week_outside_the_answers(catalogue, tmp_path):
    ans, sub, _, _ = build_case(CASES, "osic-pulmonary-fibrosis-progression")
    sub.loc[0, "Patient_Week"] = "ID00000000_99"
    report = grade("osic-pulmonary-fibrosis-progression", *reversed(write_files(tmp_path, ans, sub)))
    assert report.score is None and "'Patient_Week' value(s) are not in the test set: 'ID00000000_99'" in report.error


# TensorFlow 2.0 QA: answers are MLE-bench's test.jsonl, one JSON object per question.

def _question(example_id, long, shorts, yes_no="NONE"):
    return {"example_id": example_id, "question_text": "who?", "document_text": "<P> a b c </P>",
            "annotations": [{"long_answer": {"start_token": long[0], "end_token": long[1], "candidate_index": 0},
                             "short_answers": [{"start_token": s, "end_token": e} for s, e in shorts],
                             "yes_no_answer": yes_no}]}


def _qa_files(tmp_path, questions, rows):
    answers, submission = tmp_path / "test.jsonl", tmp_path / "submission.csv"
    answers.write_text("".join(json.dumps(q) + "\n" for q in questions))
    pd.DataFrame(rows, columns=["example_id", "PredictionString"]).to_csv(submission, index=False)
    return submission, answers


QUESTIONS = [_question("-101", (10, 90), [(12, 15)]), _question("202", (-1, -1), []),
             _question("303", (5, 50), [], "YES"), _question("404", (7, 70), [(8, 9), (20, 22)])]


def test_qa_scores_long_and_short_rows_like_grade_py(catalogue, tmp_path):
    rows = [("-101_long", "10:90"), ("-101_short", "12:16"), ("202_long", ""), ("202_short", "NO"),
            ("303_short", "YES"), ("303_long", "5:50"), ("404_long", ""), ("404_short", "20:22")]
    report = grade(QA, *_qa_files(tmp_path, QUESTIONS, rows))
    # (true, predicted): (1,1) (0,1) (0,0) (0,1) (1,1) (1,1) (1,0) (1,1) -> 5 of 8 right
    expected = sk.f1_score([1, 0, 0, 0, 1, 1, 1, 1], [1, 1, 0, 1, 1, 1, 0, 1], average="micro")
    assert report.error is None and report.score == medals.round_score(expected) == 0.625


def test_qa_reads_na_spellings_as_no_answer(catalogue, tmp_path):
    rows = [("-101_long", "10:90"), ("-101_short", "12:15"), ("202_long", "NA"), ("202_short", "null"),
            ("303_short", "YES"), ("303_long", "5:50"), ("404_long", "7:70"), ("404_short", "8:9")]
    assert grade(QA, *_qa_files(tmp_path, QUESTIONS, rows)).score == 1.0


def test_qa_rejects_a_missing_row_and_a_malformed_prediction(catalogue, tmp_path):
    rows = [("-101_long", "10:90"), ("-101_short", "12:15"), ("202_long", ""), ("202_short", "")]
    report = grade(QA, *_qa_files(tmp_path, QUESTIONS[:2], rows[:3]))
    assert report.score is None and "1 'example_id' value(s) of the test set are missing: '202_short'" in report.error
    report = grade(QA, *_qa_files(tmp_path, QUESTIONS[:2], [*rows[:3], ("202_short", "12-15")]))
    assert report.score is None and "'12-15' is not 'start_token:end_token'" in report.error

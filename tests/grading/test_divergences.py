"""Where MLE-bench is itself wrong or undefined: the score keeps the sensible result, and the report's notes give
the number MLE-bench would print, computed here independently from its grade.py."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as sk

from tests.grading_support import grade, write_files

COVID = ["reactivity", "deg_Mg_pH10", "deg_Mg_50C"]


def _covid(rng, n=120):
    ans = pd.DataFrame({"id_seqpos": [f"id_{k // 40:03x}_{k % 40}" for k in range(n)]})
    for column in [*COVID, "deg_pH10", "deg_50C"]:
        ans[column] = rng.normal(0.5, 0.3, n)
    ans["keep"] = rng.random(n) < 0.6
    sub = ans.drop(columns="keep").copy()
    sub[COVID] += rng.normal(0, 0.1, (n, 3))
    return ans, sub


def _mle_bench_covid(ans: pd.DataFrame, sub: pd.DataFrame) -> float:
    """grade.py, step by step on the files as read (RangeIndex): sort, then the keep mask aligned by index."""
    s, a = sub.reset_index(drop=True).sort_values("id_seqpos"), ans.reset_index(drop=True).sort_values("id_seqpos")
    mask = a["keep"]
    with warnings.catch_warnings():  # pandas warns that it reindexes the mask: the very bug
        warnings.simplefilter("ignore", UserWarning)
        return float(np.mean([sk.root_mean_squared_error(a[mask][c], s[mask][c]) for c in COVID]))


def test_stanford_covid_scores_by_id_and_gives_mle_bench_number_for_shuffled_rows(catalogue, tmp_path):
    rng = np.random.default_rng(11)
    ans, sub = _covid(rng)
    shuffled = sub.iloc[rng.permutation(len(sub))]
    answers, submission = write_files(tmp_path, ans, shuffled)
    report = grade("stanford-covid-vaccine", submission, answers)
    kept = ans[ans["keep"]]
    by_id = sub.set_index("id_seqpos").loc[kept["id_seqpos"]]
    ours = np.mean([sk.root_mean_squared_error(kept[c], by_id[c]) for c in COVID])
    theirs = _mle_bench_covid(ans, shuffled)
    assert report.score == round(ours, 5) and round(theirs, 5) != report.score
    assert any(f"MLE-bench would print {round(theirs, 5)}" in note for note in report.notes)
    # in the answers' row order the two agree, and nothing is said
    answers, submission = write_files(tmp_path, ans, sub)
    report = grade("stanford-covid-vaccine", submission, answers)
    assert report.score == round(_mle_bench_covid(ans, sub), 5) == round(ours, 5)
    assert not any("MLE-bench would print" in note for note in report.notes)


def _champs(rng, n=80):
    types = rng.choice(["1JHC", "2JHH", "3JHN"], n)
    ans = pd.DataFrame({"id": 4_000_000 + np.arange(n), "molecule_name": "dsgdb9nsd_000001", "type": types,
                        "scalar_coupling_constant": rng.normal(0, 30, n)})
    return ans, ans[["id", "scalar_coupling_constant"]].copy()


def test_champs_perfect_submission_earns_gold_and_says_mle_bench_prints_minus_inf(catalogue, tmp_path):
    ans, sub = _champs(np.random.default_rng(12))
    report = grade("champs-scalar-coupling", *reversed(write_files(tmp_path, ans, sub)))
    assert report.valid_submission and report.score == round(np.log(1e-9), 5)
    assert report.gold_medal
    assert any("MLE-bench would print -inf" in note for note in report.notes)
    merged = ans.merge(sub, on="id", suffixes=("_true", "_pred"))  # grade.py: log(MAE) per type, mean
    with np.errstate(divide="ignore"):
        assert np.mean([np.log(sk.mean_absolute_error(g["scalar_coupling_constant_true"],
                                                      g["scalar_coupling_constant_pred"]))
                        for _, g in merged.groupby("type")]) == -np.inf


def test_champs_exact_on_one_type_only(catalogue, tmp_path):
    rng = np.random.default_rng(13)
    ans, sub = _champs(rng)
    off = ans["type"] != "1JHC"
    sub.loc[off, "scalar_coupling_constant"] += rng.normal(0, 2, off.sum())
    report = grade("champs-scalar-coupling", *reversed(write_files(tmp_path, ans, sub)))
    errors = (ans["scalar_coupling_constant"] - sub["scalar_coupling_constant"]).abs().groupby(ans["type"]).mean()
    assert report.score == round(float(np.mean(np.log(np.maximum(errors, 1e-9)))), 5)
    assert any("MLE-bench would print -inf" in note for note in report.notes)


def test_repeated_id_is_rejected_with_the_number_mle_bench_would_print(catalogue, tmp_path):
    rng = np.random.default_rng(14)
    ans = pd.DataFrame({"segment_id": rng.permutation(10**6)[:50], "time_to_eruption": rng.integers(0, 5e7, 50)})
    sub = pd.DataFrame({"segment_id": ans["segment_id"], "time_to_eruption": rng.integers(0, 5e7, 50)})
    sub = pd.concat([sub, sub.iloc[[3]].assign(time_to_eruption=0)], ignore_index=True)  # segment 3 twice
    report = grade("predict-volcanic-eruptions-ingv-oe", *reversed(write_files(tmp_path, ans, sub)))
    assert not report.valid_submission and "duplicate 'segment_id'" in report.error
    merged = ans.merge(sub, on="segment_id", suffixes=("_true", "_pred"))  # grade.py scores all 51 rows
    theirs = int(round(sk.mean_absolute_error(merged["time_to_eruption_true"], merged["time_to_eruption_pred"])))
    assert any(f"MLE-bench would score this file anyway and print {theirs}" in note for note in report.notes)


def test_undefined_pearson_says_mle_bench_prints_nan(catalogue, tmp_path):
    ans = pd.DataFrame({"id": [f"{k:016x}" for k in range(20)], "score": np.linspace(0, 1, 20)})
    sub = ans.assign(score=0.5)  # constant: Pearson's r is nan
    report = grade("us-patent-phrase-to-phrase-matching", *reversed(write_files(tmp_path, ans, sub)))
    assert not report.valid_submission and "undefined" in report.error
    assert any("MLE-bench would print nan" in note for note in report.notes)


def test_tweet_rows_empty_on_both_sides_score_one_and_say_mle_bench_rejects(catalogue, tmp_path):
    ans = pd.DataFrame({"textID": ["a1", "b2", "c3"], "selected_text": ["good day", "", "bad"]})
    sub = pd.DataFrame({"textID": ["a1", "b2", "c3"], "selected_text": ["good", "", "bad"]})
    report = grade("tweet-sentiment-extraction", *reversed(write_files(tmp_path, ans, sub)))
    assert report.score == round((0.5 + 1 + 1) / 3, 5)
    assert any("MLE-bench would call this submission invalid: in 1 row(s)" in note for note in report.notes)


def test_competition_pages_state_the_divergences(catalogue, client):
    for slug, text in [("stanford-covid-vaccine", "by row position in the file, not by id_seqpos"),
                       ("champs-scalar-coupling", "MLE-bench would print -inf")]:
        html = client.get(f"/competitions/{slug}/").content.decode()
        assert text in html.replace("&#x27;", "'"), slug


def _reference_map5(truths: list[str], guesses: list[str]) -> float:
    """mlebench.metrics.mean_average_precision_at_k on str.split(' ') lists, written out independently."""
    scores = []
    for truth_text, guess_text in zip(truths, guesses, strict=True):
        truth, ranked = set(truth_text.split(" ")), guess_text.split(" ")[:5]
        hits = [i for i, g in enumerate(ranked) if g in truth and g not in ranked[:i]]
        scores.append(sum((n + 1) / (i + 1) for n, i in enumerate(hits)) / min(len(truth), 5))
    return float(np.mean(scores))


def test_hotel_ids_pandas_reads_as_floats_give_mle_bench_number(catalogue, tmp_path):
    ans = pd.DataFrame({"image": [f"{k:08x}.jpg" for k in range(6)], "hotel_id": [101, 202, 303, 404, 505, 606]})
    sub = pd.DataFrame({"image": ans["image"], "hotel_id": ["101", "202", "999", "404", "", "606"]})
    answers, submission = write_files(tmp_path, ans, sub)
    report = grade("hotel-id-2021-fgvc8", submission, answers)
    assert report.score == round(4 / 6, 5)  # the text as written: 4 of 6 right at rank 1
    a, s = pd.read_csv(answers).sort_values("image"), pd.read_csv(submission).sort_values("image")
    assert s["hotel_id"].dtype == np.float64  # one empty cell: pandas reads floats, '101.0' matches nothing
    # astype(str) as MLE-bench's pandas 2 does it (pandas 3 would keep NaN as NaN): str() of each value
    theirs = _reference_map5([str(v) for v in a["hotel_id"]], [str(v) for v in s["hotel_id"]])
    assert theirs == 0.0
    assert any(f"MLE-bench would print {round(theirs, 5)}" in note for note in report.notes)


def test_label_sets_pandas_reads_as_numbers_say_mle_bench_rejects(catalogue, tmp_path):
    ans = pd.DataFrame({"id": [f"{k:016x}" for k in range(4)], "attribute_ids": ["13 405", "13", "51 7", "7"]})
    sub = pd.DataFrame({"id": ans["id"], "attribute_ids": [13, 13, 51, 8]})  # one label per row: numbers
    answers, submission = write_files(tmp_path, ans, sub)
    report = grade("imet-2020-fgvc7", submission, answers)
    assert report.valid_submission
    with pytest.raises(AttributeError):  # grade.py: fillna(""), then .str.split() on an int64 column
        pd.read_csv(submission)["attribute_ids"].fillna("").str.split()
    assert any("MLE-bench would call this submission invalid" in note for note in report.notes)

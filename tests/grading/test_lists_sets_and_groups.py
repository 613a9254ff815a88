"""Competitions graded from MLE-bench's own grade.py whose answers are ranked lists, label sets,
text, sequences, grouped and multi-row answers. End to end on synthetic files in each competition's
real column format, against an independent computation that follows grade.py step by step (pandas
sort by id, then numpy / scikit-learn), plus the quirks each spec's notes describe."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as sk
from sklearn.preprocessing import MultiLabelBinarizer

from leaderboard.competitions import medals
from leaderboard.grading import grader_for
from leaderboard.grading.specs import FREESOUND_CLASSES, HMS_VOTES, JIGSAW_IDENTITIES, LISTS_SETS_AND_GROUPS
from tests.grading_support import assert_direction_matches_humans, build_case, edit_distance, grade, write_files

N = 300
PLANT = ["healthy", "scab", "frog_eye_leaf_spot", "complex", "rust", "powdery_mildew"]


def _hex(rng, n, width):
    return [f"{x:016x}"[:width] for x in rng.integers(0, 2**62, n)]


def _reference_map(actual: list[str], predicted: list[str], k: int) -> float:
    """grade.py's mean_average_precision_at_k on str.split(' ') lists, written out independently."""
    scores = []
    for truth_text, guess_text in zip(actual, predicted, strict=True):
        truth, guesses = set(str(truth_text).split(" ")), str(guess_text).split(" ")[:k]
        hit_ranks = [i + 1 for i, g in enumerate(guesses) if g in truth and g not in guesses[:i]]
        precision = [(n + 1) / rank for n, rank in enumerate(hit_ranks)]
        scores.append(sum(precision) / min(len(truth), k))
    return float(np.mean(scores))


def _ranking(id_col, target, ids, vocabulary, k, truths_per_row, extra_rows=0):
    def build(rng):
        truth = [" ".join(map(str, rng.choice(vocabulary, truths_per_row(rng), replace=False))) for _ in range(N)]
        ans = pd.DataFrame({id_col: ids(rng, N + extra_rows)[:N], target: truth})
        guesses = []
        for t in truth:
            pool = list(rng.choice(vocabulary, k, replace=False))
            if rng.random() < 0.7:
                pool.insert(int(rng.integers(0, k)), t.split(" ")[0])
            if rng.random() < 0.1:
                pool.insert(1, pool[0])  # a repeated guess uses up a rank
            guesses.append(" ".join(map(str, pool[:k + 1])))
        sub = pd.DataFrame({id_col: ans[id_col], target: guesses})
        if extra_rows:  # customers outside the answers: MLE-bench ignores them
            extra = ids(rng, N + extra_rows)[N:]
            sub = pd.concat([sub, pd.DataFrame({id_col: extra, target: "0"})], ignore_index=True)
        return ans, sub

    def expect(ans, sub):
        sub = sub[sub[id_col].isin(ans[id_col])]
        a, s = ans.sort_values(id_col), sub.sort_values(id_col)
        return _reference_map(a[target].astype(str).tolist(), s[target].astype(str).tolist(), k)

    return build, expect


def _label_sets(id_col, target, ids, vocabulary, max_labels):
    def build(rng):
        truth = [" ".join(rng.choice(vocabulary, rng.integers(1, max_labels + 1), replace=False)) for _ in range(N)]
        ans = pd.DataFrame({id_col: ids(rng), target: truth})
        guesses = []
        for t in truth:
            labels = [lab for lab in t.split() if rng.random() < 0.7]
            labels += list(rng.choice(vocabulary, rng.integers(0, 2)))
            if rng.random() < 0.1:
                labels.append("not_a_class")  # in no answers row: MultiLabelBinarizer drops it
            guesses.append(" ".join(labels))
        return ans, pd.DataFrame({id_col: ans[id_col], target: guesses})

    def expect(ans, sub):
        a, s = ans.sort_values(id_col), sub.sort_values(id_col)
        a_labels, s_labels = a[target].fillna(""), s[target].fillna("")
        classes = sorted({label for labels in a_labels.str.split() for label in labels})
        mlb = MultiLabelBinarizer(classes=classes)
        y_true = mlb.fit_transform(a_labels.str.split())
        with pytest.warns(UserWarning, match="unknown class"):
            y_pred = mlb.transform(s_labels.str.split())
        return sk.f1_score(y_true, y_pred, average="micro")

    return build, expect


def _chaii():
    words = ["नमस्ते", "भारत", "दिल्ली", "சென்னை", "தமிழ்", "1947", "Gandhi", "गांधी", "नदी", "ஆறு"]

    def build(rng):
        truth = [" ".join(rng.choice(words, rng.integers(1, 4))) for _ in range(N)]
        ans = pd.DataFrame({"id": _hex(rng, N, 9), "PredictionString": truth})
        guesses = [" ".join([w.upper() for w in t.split() if rng.random() < 0.7] + list(rng.choice(words, 1)))
                   for t in truth]
        guesses[:10] = [""] * 10  # empty predictions
        return ans, pd.DataFrame({"id": ans["id"], "PredictionString": guesses})

    def expect(ans, sub):  # grade.py: word sets, MultiLabelBinarizer, jaccard_score(average="samples")
        a, s = ans.sort_values("id"), sub.sort_values("id")
        y_true = [set(x.lower().split()) for x in a["PredictionString"].fillna("")]
        y_pred = [set(x.lower().split()) for x in s["PredictionString"].fillna("")]
        mlb = MultiLabelBinarizer(classes=list(set.union(*y_true, *y_pred)))
        return sk.jaccard_score(mlb.fit_transform(y_true), mlb.transform(y_pred), average="samples")

    return build, expect


def _freesound():
    classes = list(FREESOUND_CLASSES)

    def build(rng):
        y = np.zeros((N, len(classes)), dtype=int)
        for row in range(5, N):  # the first five rows have no label: left out of the score
            y[row, rng.choice(len(classes), rng.integers(1, 4), replace=False)] = 1
        ans = pd.DataFrame(y, columns=classes)
        ans.insert(0, "fname", _hex(rng, N, 8))
        ans["fname"] += ".wav"
        sub = pd.DataFrame(np.round(y * 0.3 + rng.random(y.shape), 4), columns=classes)
        sub.insert(0, "fname", ans["fname"])
        return ans, sub

    def expect(ans, sub):  # grade.py's calculate_overall_lwlrap_sklearn
        a, s = ans.sort_values("fname"), sub.sort_values("fname")
        truth, scores = a[classes].to_numpy(), s[classes].to_numpy()
        weight = truth.sum(axis=1)
        keep = weight > 0
        return sk.label_ranking_average_precision_score(truth[keep] > 0, scores[keep], sample_weight=weight[keep])

    return build, expect


def _champs():
    types = ["1JHC", "1JHN", "2JHC", "2JHH", "2JHN", "3JHC", "3JHH", "3JHN"]

    def build(rng):
        y = rng.normal(0, 30, N)
        ans = pd.DataFrame({"id": 4_000_000 + rng.permutation(10**5)[:N], "molecule_name": "dsgdb9nsd_000001",
                            "atom_index_0": rng.integers(0, 20, N), "atom_index_1": rng.integers(0, 20, N),
                            "type": rng.choice(types, N), "scalar_coupling_constant": y})
        scale = ans["type"].map({t: 0.2 * (k + 1) for k, t in enumerate(types)})  # errors differ by type
        return ans, pd.DataFrame({"id": ans["id"], "scalar_coupling_constant": y + rng.normal(0, 1, N) * scale})

    def expect(ans, sub):  # grade.py: merge on id, log(MAE) per type, mean over types
        merged = ans.merge(sub[["id", "scalar_coupling_constant"]], on="id", suffixes=("_true", "_pred"))
        return np.mean([np.log(sk.mean_absolute_error(g["scalar_coupling_constant_true"],
                                                      g["scalar_coupling_constant_pred"]))
                        for _, g in merged.groupby("type")])

    return build, expect


def _hms():
    votes = list(HMS_VOTES)

    def build(rng):
        eeg = np.repeat(rng.permutation(10**6)[:N // 3], 3)  # several label rows per eeg_id, as in train.csv
        y = rng.integers(0, 4, (N, len(votes)))
        y[np.arange(N), rng.integers(0, len(votes), N)] += 1  # at least one vote per row
        ans = pd.DataFrame(y, columns=votes)
        ans.insert(0, "eeg_id", eeg)
        ans.insert(1, "spectrogram_id", eeg + 7)
        group = pd.DataFrame(y, columns=votes).groupby(eeg).transform("mean").to_numpy()  # equal within eeg_id
        p = group + rng.random(group.shape)[::3].repeat(3, axis=0)
        p[p < 0.6] = 0  # exact zeros: clipped to 1e-15
        sub = pd.DataFrame(p / p.sum(axis=1, keepdims=True), columns=votes)
        sub.insert(0, "eeg_id", eeg)
        return ans, sub

    def expect(ans, sub):  # grade.py: both sorted by eeg_id, votes / row total, Kaggle's kl_divergence
        a, s = ans.sort_values("eeg_id"), sub.sort_values("eeg_id")
        target = a[votes].div(a[votes].sum(axis=1), axis=0).to_numpy()
        predicted = np.clip(s[votes].to_numpy(), 1e-15, 1 - 1e-15)
        return np.mean(np.where(target != 0, target * np.log(np.where(target != 0, target, 1) / predicted), 0)
                       .sum(axis=1))

    return build, expect


def _gestures():
    def build(rng):
        truth = [list(rng.integers(1, 21, rng.integers(8, 13))) for _ in range(N)]
        guesses = []
        for t in truth:
            g = [x if rng.random() < 0.85 else int(rng.integers(1, 21)) for x in t]
            if rng.random() < 0.3:
                del g[int(rng.integers(0, len(g)))]
            guesses.append(" ".join(map(str, g)))
        ans = pd.DataFrame({"Id": 300 + rng.permutation(N), "Sequence": [" ".join(map(str, t)) for t in truth]})
        return ans, pd.DataFrame({"Id": ans["Id"], "Sequence": guesses})

    def expect(ans, sub):  # grade.py: int lists, summed edit distance / number of true gestures
        a, s = ans.sort_values("Id"), sub.sort_values("Id")
        truth = [list(map(int, x.split())) for x in a["Sequence"].astype(str)]
        guess = [list(map(int, x.split())) for x in s["Sequence"].astype(str)]
        return sum(edit_distance(t, g) for t, g in zip(truth, guess, strict=True)) / sum(map(len, truth))

    return build, expect


def _jigsaw_reference(ans, sub):
    """grade.py step by step: sort by id, binarise everything at 0.5, filter frames per identity."""
    a, s = ans.sort_values("id").copy(), sub.sort_values("id").rename(columns={"prediction": "toxicity"})
    s["toxicity"] = s["toxicity"].apply(lambda x: 1 if x >= 0.5 else 0)
    for column in ["toxicity", *JIGSAW_IDENTITIES]:
        a[column] = a[column].apply(lambda x: 1 if x >= 0.5 else 0)

    def auc(rows):
        kept = a[rows]
        return sk.roc_auc_score(kept["toxicity"], s[s["id"].isin(kept["id"])]["toxicity"])

    bias = []
    for identity in JIGSAW_IDENTITIES:
        member, toxic = a[identity] == 1, a["toxicity"] == 1
        bias.append([auc(member), auc((~toxic & member) | (toxic & ~member)),
                     auc((toxic & member) | (~toxic & ~member))])
    means = [(sum(b[i] ** -5 for b in bias) / len(JIGSAW_IDENTITIES)) ** (1 / -5) for i in range(3)]
    return 0.25 * sk.roc_auc_score(a["toxicity"], s["toxicity"]) + sum(0.25 * m for m in means)


def _jigsaw():
    def build(rng):
        toxicity = np.round(rng.beta(0.6, 1.2, N), 4)
        ans = pd.DataFrame({"id": 7_000_000 + rng.permutation(10**5)[:N], "comment_text": "a comment, \"quoted\"",
                            "toxicity": toxicity})
        for identity in JIGSAW_IDENTITIES:
            values = np.round(rng.random(N) * rng.choice([0.4, 1.6], N), 2)
            ans[identity] = np.where(rng.random(N) < 0.2, np.nan, values)  # often missing in the real file
        prediction = np.clip(toxicity + rng.normal(0, 0.3, N), 0, 1)
        return ans, pd.DataFrame({"id": ans["id"], "prediction": prediction})

    return build, _jigsaw_reference


def _smartphone():
    def build(rng):
        names = [f"2022-04-{d:02d}-US-SJC-{k}/GooglePixel{k}" for d, k in zip(range(1, 7), range(4, 10), strict=True)]
        trips = np.repeat(names[::-1], [20, 30, 40, 50, 70, 90])  # unsorted, unequal trips: grouping must follow
        lat, lng = 37.4 + rng.random(N) * 0.1, -122.1 + rng.random(N) * 0.1
        ans = pd.DataFrame({"tripId": trips, "UnixTimeMillis": 1_650_000_000_000 + np.arange(N) * 1000,
                            "LatitudeDegrees": lat, "LongitudeDegrees": lng})
        noise = rng.normal(0, 2e-6, (N, 2)) * np.repeat(np.arange(1, 7), N // 6)[:, None]  # worse rows later
        sub = ans.assign(LatitudeDegrees=lat + noise[:, 0], LongitudeDegrees=lng + noise[:, 1])
        return ans, sub

    def expect(ans, sub):  # grade.py: per trip, rows in file order, the notebook's calc_score; mean over trips
        scores = []
        for trip in ans["tripId"].unique():
            a, s = ans[ans["tripId"] == trip], sub[sub["tripId"] == trip]
            la1, lo1, la2, lo2 = (np.deg2rad(f[c].to_numpy()) for f in (s, a)
                                  for c in ("LatitudeDegrees", "LongitudeDegrees"))
            h = np.sin((la2 - la1) / 2) ** 2 + np.cos(la1) * np.cos(la2) * np.sin((lo2 - lo1) / 2) ** 2
            d = 2 * 6_371_000 * np.arcsin(np.sqrt(h))
            scores.append(np.mean([np.quantile(d, 0.5), np.quantile(d, 0.95)]))
        return np.mean(scores)

    return build, expect


def _billion_words():
    words = ["the", "court", "said", "on", "Tuesday", "that", "it", "would", "not", "\"", ",", "rule", "."]

    def build(rng):
        truth = [" ".join(rng.choice(words, rng.integers(5, 15))) for _ in range(N)]
        guesses = []
        for t in truth:
            tokens = t.split(" ")
            del tokens[int(rng.integers(1, len(tokens) - 1))]  # the word the test set removed
            if rng.random() < 0.5:
                tokens.insert(int(rng.integers(1, len(tokens))), str(rng.choice(words)))
            guesses.append(" ".join(tokens))
        ans = pd.DataFrame({"id": rng.permutation(N), "sentence": truth})
        return ans, pd.DataFrame({"id": ans["id"], "sentence": guesses})

    def expect(ans, sub):  # grade.py: sorted by id, mean Levenshtein distance of the strings
        a, s = ans.sort_values("id"), sub.sort_values("id")
        return np.mean([edit_distance(t, g) for t, g in zip(a["sentence"], s["sentence"], strict=True)])

    return build, expect


def _images(rng, n=N):
    return [f"{h}.jpg" for h in _hex(rng, n, 16)]


def _customer_ids(rng, n=N):
    return [a + b for a, b in zip(_hex(rng, n, 16), _hex(rng, n, 16), strict=True)]


CASES = {
    "hotel-id-2021-fgvc8": _ranking("image", "hotel_id", _images, np.arange(200), 5, lambda rng: 1),
    "h-and-m-personalized-fashion-recommendations": _ranking(
        "customer_id", "prediction", _customer_ids, [f"0{x}" for x in 706016001 + np.arange(60)], 12,
        lambda rng: int(rng.integers(1, 20)), extra_rows=25),
    "imet-2020-fgvc7": _label_sets("id", "attribute_ids", lambda rng: _hex(rng, N, 16),
                                   [str(x) for x in range(0, 3471, 37)], 5),
    "plant-pathology-2021-fgvc8": _label_sets("image", "labels", _images, PLANT, 2),
    "facebook-recruiting-iii-keyword-extraction": _label_sets(
        "Id", "Tags", lambda rng: 6034196 + rng.permutation(10**5)[:N],
        ["c#", "java", "php", "javascript", "asp.net", "c++", "jquery", "python", "null", "ios", "sql-server"], 4),
    "chaii-hindi-and-tamil-question-answering": _chaii(),
    "freesound-audio-tagging-2019": _freesound(),
    "champs-scalar-coupling": _champs(),
    "multi-modal-gesture-recognition": _gestures(),
    "jigsaw-unintended-bias-in-toxicity-classification": _jigsaw(),
    "smartphone-decimeter-2022": _smartphone(),
    "billion-word-imputation": _billion_words(),
    "hms-harmful-brain-activity-classification": _hms(),
}
SLUGS = sorted(CASES)


def test_every_spec_here_has_a_case():
    assert sorted(spec.competition_id for spec in LISTS_SETS_AND_GROUPS) == SLUGS



def _shuffle_groups(sub: pd.DataFrame, id_col: str, rng) -> pd.DataFrame:
    """Repeated ids (a trip's rows, an EEG's label windows): shuffle the groups, keep each group's row order."""
    ids = sub[id_col].unique()
    rank = dict(zip(rng.permutation(ids), range(len(ids)), strict=True))
    return sub.iloc[np.argsort(sub[id_col].map(rank).to_numpy(), kind="stable")]


def _build(slug):
    return build_case(CASES, slug)


@pytest.mark.parametrize("slug", SLUGS)
def test_scores_like_an_independent_computation(catalogue, slug, tmp_path):
    ans, sub, expect, rng = _build(slug)
    spec = grader_for(slug)
    if spec.unique_ids:
        answers, submission = write_files(tmp_path, ans, sub, rng)
    else:
        answers, submission = write_files(tmp_path, ans, _shuffle_groups(sub, spec.id_column, rng))
    expected = expect(pd.read_csv(answers), pd.read_csv(submission))  # read as MLE-bench reads them

    report = grade(slug, submission, answers)

    assert report.error is None, report.error
    assert report.valid_submission
    assert report.score == medals.round_score(expected)
    assert 0 < abs(report.score) < 10  # a real, partial score (edit distances run to several characters)


@pytest.mark.parametrize("slug", SLUGS)
def test_a_missing_row_is_rejected(catalogue, slug, tmp_path):
    ans, sub, _, _ = _build(slug)
    answers, submission = write_files(tmp_path, ans, sub.iloc[1:])
    report = grade(slug, submission, answers)
    assert not report.valid_submission and report.score is None
    if grader_for(slug).unique_ids:
        assert f"1 {grader_for(slug).id_column!r} value(s) of the test set are missing: " in report.error
    else:  # the first eeg_id still has two of its three rows
        assert f"wrong number of rows: the submission has {N - 1}, expected {N}" in report.error


@pytest.mark.parametrize("slug", SLUGS)
def test_a_misnamed_prediction_column_is_rejected(catalogue, slug, tmp_path):
    ans, sub, _, _ = _build(slug)
    spec = grader_for(slug)
    target = (spec.submission_targets or spec.target_columns)[0]
    answers, submission = write_files(tmp_path, ans, sub.rename(columns={target: target.upper() + "_"}))
    report = grade(slug, submission, answers)
    assert report.score is None and f"missing column(s) {target!r}" in report.error


@pytest.mark.parametrize("slug", SLUGS)
def test_direction_agrees_with_the_human_leaderboard(catalogue, slug):
    assert_direction_matches_humans(catalogue.get(slug=slug), grader_for(slug).lower_is_better)


def _tiny(slug, tmp_path, ans_rows, sub_rows):
    spec = grader_for(slug)
    columns = [spec.id_column, spec.target_columns[0]]
    answers, submission = write_files(tmp_path, pd.DataFrame(ans_rows, columns=columns),
                                 pd.DataFrame(sub_rows, columns=columns))
    return grade(slug, submission, answers)


def test_hotel_map_counts_a_repeated_guess_and_a_double_space_as_used_ranks(catalogue, tmp_path):
    report = _tiny("hotel-id-2021-fgvc8", tmp_path, [["a.jpg", "7"], ["b.jpg", "8"], ["c.jpg", "9"]],
                   [["a.jpg", "3 3 7 1 2"], ["b.jpg", "1  8 2 3"], ["c.jpg", "1 2 3 4 5 9"]])
    assert report.score == medals.round_score((1 / 3 + 1 / 3 + 0) / 3)  # 9 is sixth: past k=5


def test_h_and_m_divides_by_the_number_of_purchases_up_to_twelve(catalogue, tmp_path):
    report = _tiny("h-and-m-personalized-fashion-recommendations", tmp_path,
                   [["c1", "01 02"], ["c2", "05"]],
                   [["c1", "02 09 01"], ["c2", "09 05"], ["c3", "05"]])  # c3 is not in the answers: ignored
    assert report.score == medals.round_score(((1 + 2 / 3) / 2 + 1 / 2) / 2)


def test_h_and_m_rejects_extra_columns(catalogue, tmp_path):
    ans, sub, _, _ = _build("h-and-m-personalized-fashion-recommendations")
    answers, submission = write_files(tmp_path, ans, sub.assign(score=1))
    report = grade("h-and-m-personalized-fashion-recommendations", submission, answers)
    assert report.score is None and "unexpected column(s) 'score'" in report.error


def test_micro_f1_ignores_labels_absent_from_the_answers(catalogue, tmp_path):
    report = _tiny("plant-pathology-2021-fgvc8", tmp_path,
                   [["1.jpg", "scab"], ["2.jpg", "rust complex"], ["3.jpg", "healthy"]],
                   [["1.jpg", "scab scab powdery_mildew"], ["2.jpg", "rust"], ["3.jpg", ""]])
    # powdery_mildew is in no answers row: ignored. TP 2 (scab, rust), FP 0, FN 2 (complex, healthy)
    assert report.score == medals.round_score(4 / 6)


def test_facebook_reads_a_lone_na_spelling_as_no_tags(catalogue, tmp_path):
    report = _tiny("facebook-recruiting-iii-keyword-extraction", tmp_path,
                   [[1, "java null"], [2, "null"], [3, "php"]], [[1, "java null"], [2, "null"], [3, "NA"]])
    # row 2's answer and prediction are both missing for pandas: no tags. TP 2, FN 1 (php) -> 4/5
    assert report.score == medals.round_score(4 / 5)


def test_chaii_scores_an_empty_answer_and_prediction_zero(catalogue, tmp_path):
    report = _tiny("chaii-hindi-and-tamil-question-answering", tmp_path,
                   [["a1", "भारत"], ["a2", ""]], [["a1", "भारत देश"], ["a2", ""]])
    assert report.score == medals.round_score((1 / 2 + 0) / 2)


def test_imet_rejects_a_duplicated_id(catalogue, tmp_path):
    ans, sub, _, _ = _build("imet-2020-fgvc7")
    answers, submission = write_files(tmp_path, ans, pd.concat([sub, sub.iloc[:1]]))
    report = grade("imet-2020-fgvc7", submission, answers)
    assert report.score is None and "duplicate 'id' value(s)" in report.error


def test_freesound_rejects_classes_out_of_order(catalogue, tmp_path):
    ans, sub, _, _ = _build("freesound-audio-tagging-2019")
    columns = list(sub.columns)
    columns[1], columns[2] = columns[2], columns[1]
    answers, submission = write_files(tmp_path, ans, sub[columns])
    report = grade("freesound-audio-tagging-2019", submission, answers)
    assert report.score is None
    assert "column 2 is 'Accordion', expected 'Accelerating_and_revving_and_vroom'" in report.error


def test_hms_requires_rows_that_round_to_one_at_five_decimals(catalogue, tmp_path):
    ans, sub, _, _ = _build("hms-harmful-brain-activity-classification")
    answers, submission = write_files(tmp_path, ans, sub.assign(other_vote=sub["other_vote"] + 2e-5))
    report = grade("hms-harmful-brain-activity-classification", submission, answers)
    assert report.score is None and f"{N} row(s) of probabilities do not sum to 1" in report.error


def test_champs_rejects_a_repeated_id(catalogue, tmp_path):
    ans, sub, _, _ = _build("champs-scalar-coupling")
    answers, submission = write_files(tmp_path, ans, pd.concat([sub, sub.iloc[:1]]))
    report = grade("champs-scalar-coupling", submission, answers)
    assert report.score is None and "duplicate 'id' value(s)" in report.error


@pytest.mark.parametrize("cell", ["", "NA", "3 x 4", "2.5"])
def test_gestures_must_be_integers_like_mle_bench(catalogue, tmp_path, cell):
    report = _tiny("multi-modal-gesture-recognition", tmp_path, [[1, "3 4"], [2, "5"]], [[1, "3 4"], [2, cell]])
    assert report.score is None and "is not whole numbers separated by spaces" in report.error, report.error


def test_jigsaw_scores_only_the_side_of_one_half(catalogue, tmp_path):
    ans, sub, expect, _ = _build("jigsaw-unintended-bias-in-toxicity-classification")
    squashed = sub.assign(prediction=np.where(sub["prediction"] >= 0.5, 0.51, 0.49))
    answers, submission = write_files(tmp_path, ans, squashed)
    report = grade("jigsaw-unintended-bias-in-toxicity-classification", submission, answers)
    assert report.score == medals.round_score(expect(ans, sub))  # the same score as the raw predictions


def test_smartphone_pairs_a_trips_rows_in_file_order_like_mle_bench(catalogue, tmp_path):
    """UnixTimeMillis is never compared: a trip's rows out of time order are scored against the wrong
    positions, far worse, exactly as MLE-bench scores them."""
    ans, sub, expect, rng = _build("smartphone-decimeter-2022")
    in_order = grade("smartphone-decimeter-2022", *reversed(write_files(tmp_path, ans, sub)))
    answers, submission = write_files(tmp_path, ans, sub, rng)  # rows shuffled within trips too
    shuffled = grade("smartphone-decimeter-2022", submission, answers)
    assert in_order.score < 10 < shuffled.score
    assert shuffled.score == medals.round_score(expect(pd.read_csv(answers), pd.read_csv(submission)))


@pytest.mark.parametrize("cell", ["", "NA", "null"])
def test_billion_word_rejects_a_sentence_pandas_reads_as_missing(catalogue, tmp_path, cell):
    report = _tiny("billion-word-imputation", tmp_path, [[0, "a b c"], [1, "d e f"]], [[0, "a c"], [1, cell]])
    assert report.score is None
    assert "column 'sentence' has 1 empty or missing (NA, null, ...) value(s): rows 2" in report.error, report.error

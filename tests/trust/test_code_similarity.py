"""Runs with copied code are found and flagged; independent solutions to the same task are not; the
index answers what comparing every pair by brute force answers."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from leaderboard.models import Competition, Run
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.store import write_steps
from leaderboard.trust import similarity
from leaderboard.trust.models import Finding
from leaderboard.trust.similarity import extraction, index, tokens, winnowing
from leaderboard.trust.similarity.models import CodeFingerprint, CodeHashCount, CodeMatch, CodePosting
from tests.trust.similarity_support import COPY, INDEPENDENT, ORIGINAL, add_code, make_run
from tests.trust.test_winnowing import brute_winnow


@pytest.fixture
def titanic(db):
    return Competition.objects.get(slug="spaceship-titanic")


def findings(run: Run) -> list[Finding]:
    return list(Finding.objects.filter(run=run, check_name=similarity.CHECK_NAME))


def test_copied_code_with_new_names_and_comments_is_flagged_on_the_newer_run(titanic):
    original, copy = make_run(titanic, agent="first"), make_run(titanic, agent="second")
    add_code(original, "code/solution.py", ORIGINAL)
    add_code(copy, "code/main.py", COPY)
    similarity.index_run(original)
    [match] = similarity.index_run(copy)
    assert match.run == original.pk and match.similarity > 0.9
    [finding] = findings(copy)
    assert finding.evidence["run"] == original.pk and finding.evidence["similarity"] > 0.9
    assert finding.status == Finding.Status.OPEN and "matches run" in finding.summary
    assert findings(original) == []  # the earlier run is not the one that copied


def test_two_seeds_of_one_experiment_are_similar_but_never_flagged_as_copies(titanic):
    first, second = make_run(titanic, agent="seeded"), make_run(titanic, agent="seeded")
    assert first.experiment_id == second.experiment_id
    add_code(first, "code/solution.py", ORIGINAL)
    add_code(second, "code/main.py", COPY)
    similarity.index_run(first)
    [match] = similarity.index_run(second)
    assert match.run == first.pk and match.similarity > 0.9  # shown as the closest run
    assert findings(second) == [] and findings(first) == []


def test_independent_solutions_with_the_same_imports_and_boilerplate_score_low(titanic):
    one, two = make_run(titanic), make_run(titanic)
    add_code(one, "code/solution.py", ORIGINAL)
    add_code(two, "code/solution.py", INDEPENDENT)
    similarity.index_run(one)
    similarity.index_run(two)
    fp = CodeFingerprint.objects.get(run=two)
    found = index.candidates(fp, fp.hash_array())
    assert found and max(c.similarity for c in found) < 0.1  # they share hashes: the imports and file paths
    assert findings(two) == [] and findings(one) == []
    assert not CodeMatch.objects.filter(run=two).exists()  # below SIMILARITY_MIN_SHOWN: not kept


def test_the_threshold_is_a_setting(titanic, settings):
    original, copy = make_run(titanic), make_run(titanic)
    add_code(original, "code/a.py", ORIGINAL)
    add_code(copy, "code/b.py", COPY)
    settings.SIMILARITY_THRESHOLD = 0.99
    similarity.index_run(original)
    similarity.index_run(copy)
    assert findings(copy) == [] and CodeMatch.objects.filter(run=copy).count() == 1  # shown, not flagged
    settings.SIMILARITY_THRESHOLD = 0.5
    similarity.index_run(copy)
    assert len(findings(copy)) == 1


def test_runs_of_other_competitions_are_not_compared(titanic):
    other = Competition.objects.exclude(pk=titanic.pk).first()
    a, b = make_run(titanic), make_run(other)
    add_code(a, "code/a.py", ORIGINAL)
    add_code(b, "code/a.py", ORIGINAL)
    similarity.index_run(a)
    assert similarity.index_run(b) == []


def test_a_staff_decision_survives_indexing_again(titanic, staff):
    original, copy = make_run(titanic), make_run(titanic)
    add_code(original, "code/a.py", ORIGINAL)
    add_code(copy, "code/b.py", COPY)
    similarity.index_run(original)
    similarity.index_run(copy)
    Finding.objects.filter(run=copy).update(status=Finding.Status.DISMISSED, review_reason="same author")
    similarity.index_run(copy)
    similarity.index_run(original)
    [finding] = findings(copy)
    assert finding.status == Finding.Status.DISMISSED and finding.evidence["run"] == original.pk


def test_an_open_flag_goes_when_the_copy_is_gone(titanic):
    original, copy = make_run(titanic), make_run(titanic)
    add_code(original, "code/a.py", ORIGINAL)
    artifact = add_code(copy, "code/b.py", COPY)
    similarity.index_run(original)
    similarity.index_run(copy)
    artifact.delete()
    similarity.index_run(copy)
    assert findings(copy) == [] and CodeFingerprint.objects.get(run=copy).size == 0


def test_indexing_the_older_run_again_updates_the_newer_runs_flag(titanic):
    original, copy = make_run(titanic), make_run(titanic)
    artifact = add_code(original, "code/a.py", ORIGINAL)
    add_code(copy, "code/b.py", COPY)
    similarity.index_run(original)
    similarity.index_run(copy)
    assert len(findings(copy)) == 1
    artifact.delete()
    similarity.index_run(original)
    assert findings(copy) == [] and not CodeMatch.objects.exists()


# --- where the code comes from


def code_step(index: int, content: str, **data) -> StepData:
    data = {"file": "runfile.py", "content": content, **data}
    return StepData(index=index, kind="code", title="runfile.py", data=data)


def test_aide_nodes_and_code_steps_are_read_best_node_first(titanic):
    run = make_run(titanic)
    steps = [StepData(index=0, kind="plan", text="draft"), code_step(1, "a = 1\n"),
             code_step(2, ORIGINAL, is_best=True, node_id="n2"), code_step(3, "b = 2\n"), code_step(4, "a = 1\n")]
    write_steps(run, steps)
    found = extraction.code_of(run)
    assert [s.step for s in found] == [2, 4, 3]  # best, then latest first; step 1 repeats step 4's text


def test_code_from_the_trajectory_is_matched_and_the_finding_names_its_steps(titanic):
    original, copy = make_run(titanic), make_run(titanic)
    add_code(original, "code/solution.py", ORIGINAL)
    write_steps(copy, [StepData(index=0, kind="plan", text="copy it"), code_step(1, "print('hello')\n"),
                       code_step(2, COPY)])
    similarity.index_run(original)
    similarity.index_run(copy)
    [finding] = findings(copy)
    assert finding.steps == [2]


def test_code_read_is_bounded(titanic, settings):
    settings.SIMILARITY_MAX_BYTES = 1000
    run = make_run(titanic)
    add_code(run, "code/a.py", ORIGINAL)
    add_code(run, "code/b.py", COPY)
    write_steps(run, [code_step(0, INDEPENDENT)])
    found = extraction.code_of(run)
    assert sum(len(s.text.encode()) for s in found) <= 1000 and [s.label for s in found] == ["code/a.py"]


def test_binary_and_notebook_files(titanic):
    import json

    run = make_run(titanic)
    add_code(run, "code/blob.py", "\x00\x01binary")
    notebook = {"cells": [{"cell_type": "markdown", "source": ["# Title"]},
                          {"cell_type": "code", "source": ["import pandas as pd\n", "x = 1\n"]}]}
    add_code(run, "code/nb.ipynb", json.dumps(notebook))
    add_code(run, "code/broken.ipynb", "{not json")
    found = {s.label: s.text for s in extraction.code_of(run)}
    assert found == {"code/nb.ipynb": "import pandas as pd\nx = 1\n", "code/broken.ipynb": "{not json"}


def test_a_run_outside_the_catalogue_is_not_indexed(db):
    run = make_run(None)
    add_code(run, "code/a.py", ORIGINAL)
    assert similarity.index_run(run) == [] and not CodeFingerprint.objects.filter(run=run).exists()


# --- the index against brute force


def mutate(rng: random.Random, code: str) -> str:
    """A variant: some lines dropped, some duplicated, some names changed."""
    lines = code.splitlines()
    out = []
    for line in lines:
        r = rng.random()
        if r < 0.15:
            continue
        out.append(line.replace("df", "frame") if r < 0.3 else line)
        if r > 0.9 and not line.startswith((" ", "def", "import", "from", "for")):
            out.append(line)
    return "\n".join(out) + "\n"


def brute_hashes(text: str) -> set[int]:
    symbols = [t.symbol for t in tokens.normalised(text)]
    hashes = winnowing.kgram_hashes(symbols)
    return {hashes[p] for p in brute_winnow(hashes, winnowing.W)}


@pytest.mark.parametrize("common_runs", [50, 4])
def test_the_index_finds_what_comparing_every_pair_finds(titanic, settings, common_runs):
    """With few runs nothing is boilerplate; with SIMILARITY_COMMON_RUNS = 4 the hashes more than 4 of
    the 12 runs hold are, and the brute force leaves them out too."""
    settings.SIMILARITY_MIN_SHOWN = 0.01
    settings.SIMILARITY_COMMON_RUNS = common_runs
    rng = random.Random(7)
    bases = [ORIGINAL, COPY, INDEPENDENT]
    runs, texts = [], {}
    for i in range(12):
        run = make_run(titanic, agent=f"agent{i % 3}")
        texts[run.pk] = [mutate(rng, rng.choice(bases)) for _ in range(rng.randrange(1, 3))]
        for j, text in enumerate(texts[run.pk]):
            add_code(run, f"code/f{j}.py", text)
        similarity.index_run(run)
        runs.append(run)
    brute = {pk: set().union(*(brute_hashes(t) for t in ts)) for pk, ts in texts.items()}
    held = Counter(h for hashes in brute.values() for h in hashes)
    common = {h for h, n in held.items() if n > common_runs}
    assert bool(common) == (common_runs == 4)
    assert dict(CodeHashCount.objects.filter(competition=titanic).values_list("hash", "runs")) == held
    for run in runs:
        fp = CodeFingerprint.objects.get(run=run)
        assert set(fp.hash_array().tolist()) == brute[run.pk]
        found = {c.run: (c.shared, c.similarity) for c in index.candidates(fp, fp.hash_array())}
        assert found == _expected(brute, run.pk, set(brute) - {run.pk}, common)
    if common:
        return  # the kept pairs were found while fewer runs made fewer hashes common
    # the kept pairs are each run's matches among the runs indexed before it
    for later in runs:
        kept = {m.other_id: m.similarity for m in CodeMatch.objects.filter(run=later)}
        earlier = {r.pk for r in runs if r.pk < later.pk}
        assert kept == pytest.approx({pk: s for pk, (_, s) in _expected(brute, later.pk, earlier).items()
                                      if s >= settings.SIMILARITY_MIN_SHOWN})


def _expected(brute: dict[int, set[int]], pk: int, among: set[int],
              common: set[int] = frozenset()) -> dict[int, tuple[int, float]]:
    """Shared hashes (but the common ones) and similarity of run `pk` with each of `among` sharing
    any, by set intersection."""
    out = {}
    for other in among:
        shared = len((brute[pk] & brute[other]) - common)
        if shared:
            out[other] = (shared, shared / max(min(len(brute[pk]), len(brute[other])), index.MIN_HASHES))
    return out


def test_counts_follow_runs_indexed_again_and_deleted(titanic):
    a, b = make_run(titanic), make_run(titanic)
    add_code(a, "code/a.py", ORIGINAL)
    add_code(b, "code/b.py", ORIGINAL + "\n" + INDEPENDENT)
    similarity.index_run(a)
    similarity.index_run(b)
    similarity.index_run(a)
    both = set(CodeFingerprint.objects.get(run=a).hash_array().tolist())
    assert dict(CodeHashCount.objects.values_list("hash", "runs")) == {
        h: 1 + (h in both) for h in CodeFingerprint.objects.get(run=b).hash_array().tolist()}
    b.delete()
    assert dict(CodeHashCount.objects.values_list("hash", "runs")) == dict.fromkeys(both, 1)


@pytest.mark.parametrize(("common_runs", "similar"), [(50, True), (3, False)])
def test_boilerplate_many_runs_hold_does_not_make_runs_similar(titanic, settings, common_runs, similar):
    """Five runs open with the same long preamble, four then solve it one way and one another way:
    once more than SIMILARITY_COMMON_RUNS runs hold the preamble, it stops making them similar. A
    reference file of the preamble still matches them all."""
    settings.SIMILARITY_COMMON_RUNS = common_runs
    cut = ORIGINAL.index("X = add_features")
    preamble, body = ORIGINAL[:cut], ORIGINAL[cut:]
    others = [make_run(titanic) for _ in range(4)]
    for run in others:
        add_code(run, "code/a.py", preamble + INDEPENDENT[INDEPENDENT.index("numeric = "):])
        similarity.index_run(run)
    last = make_run(titanic)
    add_code(last, "code/a.py", preamble + body)
    best = max(c.similarity for c in similarity.index_run(last) or [index.Candidate(0, 0, None, 0, 0.0)])
    assert (best > 0.3) is similar
    reference = similarity.add_reference(competition=titanic, label="notebook", name="nb.py", code=preamble)
    fp = CodeFingerprint.objects.get(reference=reference)
    matched = {c.run for c in index.candidates(fp, fp.hash_array()) if c.similarity > 0.9}
    assert matched == {r.pk for r in [*others, last]}


def test_postings_are_replaced_when_a_run_is_indexed_again(titanic):
    run = make_run(titanic)
    add_code(run, "code/a.py", ORIGINAL)
    similarity.index_run(run)
    similarity.index_run(run)
    fp = CodeFingerprint.objects.get(run=run)
    assert CodePosting.objects.filter(fingerprint__run=run).count() == fp.size == len(set(fp.hash_array().tolist()))


# --- reference code


def test_reference_code_registered_after_the_run_flags_it(titanic):
    run = make_run(titanic)
    add_code(run, "code/a.py", COPY)
    similarity.index_run(run)
    reference = similarity.add_reference(competition=titanic, label="Top notebook by someone", name="nb.py",
                                         code=ORIGINAL)
    [finding] = findings(run)
    assert finding.evidence["reference"] == reference.pk and finding.evidence["run"] is None
    assert "Top notebook by someone" in finding.summary
    later = make_run(titanic)
    add_code(later, "code/b.py", ORIGINAL)
    kept = similarity.index_run(later)
    assert [(c.reference, round(c.similarity, 2)) for c in kept if c.reference] == [(reference.pk, 1.0)]

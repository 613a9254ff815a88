"""Search across runs answers exactly what a brute-force scan of the stored steps answers: on the
real public trajectories, and on a generated set of runs, for words, prefixes, phrases and exact text
(on whichever database the suite runs: SQLite's FTS5, or PostgreSQL's tsvector of words)."""

from __future__ import annotations

import pytest

from leaderboard.models import Run
from leaderboard.search.query import parse
from leaderboard.trajectories.importers import read_trajectories, save_steps
from tests.conftest import TRAJECTORIES_DIR
from tests.search.support import all_hits, brute_force, generated_texts, make_run, run_with

REAL_FILES = ["aide/translucent-spaniel_journal.json", "mlagentbench/gemini-pro_cifar10_0_trace.json",
              "openhands/basic_gui_mode.json",
              "swe-agent/6e44b9__sweagenttestrepo-1c2844.traj", "inspect/log_read_sample.json",
              "inspect/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"]


def terms_of(query: str) -> list[tuple[str, str]]:
    return [(t.kind, t.value) for t in parse(query).terms]


@pytest.fixture
def real_runs(db):
    runs = []
    for name in REAL_FILES:
        for parsed in read_trajectories(TRAJECTORIES_DIR / name):
            run = make_run(agent=name.split("/")[0])
            save_steps(run, parsed)
            runs.append(run)
    return runs


REAL_QUERIES = ["error", "Error*", "train", "def", "import numpy", '"import numpy as np"', "submission.csv",
                "KeyError", "'id'", '"No such file"', "model*", "the", "x", '"accuracy"', "/", "score* valid*",
                "zzzqqq", "import"]


def test_real_trajectories(real_runs):
    assert sum(r.n_steps for r in real_runs) > 100
    differ = [q for q in REAL_QUERIES if all_hits(None, q) != brute_force(real_runs, terms_of(q))]
    assert differ == []
    assert len(all_hits(None, "import")) > 5  # the comparisons are not all empty


@pytest.fixture
def generated(db):
    return [run_with(generated_texts(seed, 40)) for seed in range(12)]


GENERATED_QUERIES = [
    "error", "errors", "err*", "keyerror", '"KeyError"', "train.csv", "train", '"out of memory"', "out of memory",
    "'id'", '"<script>"', "a&b", "x_y", "x", "lr=1e-3", "1e", "épée", "ÉPÉE", "naïve", "tok*", "token",
    "ValueError: not found", '"ValueError: not"', "0.4312", "/kaggle/input", '"fit()"', "memory cuda epoch",
]


def test_generated_runs(generated):
    differ = [q for q in GENERATED_QUERIES if all_hits(None, q) != brute_force(generated, terms_of(q))]
    assert differ == []
    assert len(all_hits(None, "error")) > 20


def test_generated_runs_by_kind(generated):
    for kind in ("error", "code"):
        expected = brute_force(generated, terms_of("error*"), kind=kind)
        assert expected
        assert all_hits(None, "error*", kind=kind) == expected


def test_a_word_is_not_a_substring(db):
    run = run_with([("error", "KeyError raised"), ("error", "an error raised")])
    assert all_hits(None, "error") == [(run.pk, 1)]
    assert all_hits(None, '"error"') == [(run.pk, 0), (run.pk, 1)]
    assert all_hits(None, "keyerr*") == [(run.pk, 0)]


def test_phrase_needs_the_words_in_order(db):
    run = run_with([("error", "CUDA out of memory. Tried"), ("plan", "memory out of reach"),
                    ("plan", "out of MEMORY")])
    assert all_hits(None, '"out of memory"') == [(run.pk, 0), (run.pk, 2)]
    assert all_hits(None, "out of memory") == [(run.pk, 0), (run.pk, 1), (run.pk, 2)]


def test_substring_with_punctuation(db):
    run = run_with([("error", "Traceback: KeyError: 'id' at line 3"), ("error", "KeyError: 'name'"),
                    ("observation", "read /kaggle/input/train.csv")])
    assert all_hits(None, "\"KeyError: 'id'\"") == [(run.pk, 0)]
    assert all_hits(None, "KeyError: 'id'") == [(run.pk, 0)]
    assert all_hits(None, "input/train.csv") == [(run.pk, 2)]
    assert Run.objects.count() == 1

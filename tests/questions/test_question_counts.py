"""A saved question counts, per experiment, exactly the runs a brute-force reading of the stored steps
finds, among the runs its viewer may see (never another user's private run): on generated runs and on
the real public trajectories, on whichever database the suite runs (SQLite's FTS5 or PostgreSQL's
tsvector)."""

from __future__ import annotations

import pytest

from leaderboard.models import Run
from leaderboard.questions import matching
from leaderboard.questions.models import SavedQuestion
from leaderboard.trajectories.importers import read_trajectories, save_steps
from tests.conftest import TRAJECTORIES_DIR
from tests.questions.support import brute_force_counts, generated_runs
from tests.search.support import make_run, run_with
from tests.search.test_search_equals_scan import REAL_FILES

SEARCHES = [
    ("error", {}),
    ("err*", {}),
    ('"out of memory"', {}),
    ("'id'", {}),
    ("train.csv", {}),
    ("keyerror", {"kind": "error"}),
    ("memory cuda", {}),
    ("tok*", {"kind": "code"}),
    ("zzzqqq", {}),
    ('"test_labels"', {}),
]
SIGNATURES = ["out of memory", "KeyError: <str>", "FileNotFoundError: *", "no submission", "ValueError: *", "*"]


def questions_for(owner) -> list[SavedQuestion]:
    made = [
        SavedQuestion(owner=owner, name=f"s{i}", kind="search", query=q, filters=f) for i, (q, f) in enumerate(SEARCHES)
    ]
    made += [SavedQuestion(owner=owner, name=f"f{i}", kind="failure", signature=s) for i, s in enumerate(SIGNATURES)]
    return SavedQuestion.objects.bulk_create(made)


def counted(question, user, runs) -> dict:
    experiments = sorted({r.experiment_id for r in runs})
    return dict(matching.counts(question, matching.scoped_runs(user, experiments)))


@pytest.fixture(params=["rare", "common", "probed"])
def read_first(request, monkeypatch):
    """Every way a search question is counted: candidates read in order; past READ_FIRST of them (a
    common term) each run's first candidate first; and on PostgreSQL, each run's first PROBE steps
    first (here 2, after a sample of 1 run, whatever it finds), the runs they leave then as a common
    term's."""
    if request.param != "rare":
        monkeypatch.setattr(matching, "READ_FIRST", 3)
    if request.param == "common":
        monkeypatch.setattr(matching, "PROBE_WHEN_SETTLED", 2)  # never probed
    if request.param == "probed":
        monkeypatch.setattr(matching, "PROBE", 2)
        monkeypatch.setattr(matching, "SAMPLE_RUNS", 1)
        monkeypatch.setattr(matching, "PROBE_WHEN_SETTLED", 0)
    return request.param


def test_generated_runs_for_every_viewer(db, alice, bob, staff, read_first):
    runs = generated_runs([alice, bob, None])
    assert len({r.experiment_id for r in runs}) == 2 and any(r.is_private for r in runs)
    differ, nonzero = [], 0
    for question in questions_for(alice):
        for user in (None, alice, bob, staff):
            expected = brute_force_counts(question, user, runs)
            nonzero += bool(expected)
            if counted(question, user, runs) != dict(expected):
                differ.append((question.describes, getattr(user, "username", None)))
    assert differ == []
    assert nonzero > 30  # the comparisons are not all empty


def test_another_users_private_runs_are_never_counted(db, alice, bob):
    mine = make_run(owner=alice, private=True, status=Run.Status.GRADED)
    theirs = make_run(owner=bob, private=True, status=Run.Status.GRADED)
    from leaderboard.trajectories.store import write_steps
    from tests.search.support import steps_of

    for run in (mine, theirs):
        write_steps(run, steps_of([("error", "torch.cuda.OutOfMemoryError: CUDA out of memory")]))
    search, failure = questions_for(alice)[2], SavedQuestion.objects.get(name="f0")
    for question in (search, failure):
        assert counted(question, alice, [mine]) == {mine.experiment_id: 1}
        assert counted(question, bob, [mine]) == {mine.experiment_id: 1}  # bob's own, not alice's
        assert counted(question, None, [mine]) == {}
        assert list(matching.matching_runs(question, matching.scoped_runs(bob, mine.experiment_id))) == [theirs.pk]


@pytest.fixture
def real_runs(db, alice):
    runs = []
    for k, name in enumerate(REAL_FILES):
        for parsed in read_trajectories(TRAJECTORIES_DIR / name):
            run = make_run(agent=f"real-{k % 2}", owner=alice, private=k % 3 == 1, status=Run.Status.GRADED)
            save_steps(run, parsed)
            runs.append(run)
    return runs


REAL_SEARCHES = [
    "error",
    "Error*",
    "import numpy",
    '"import numpy as np"',
    "submission.csv",
    "KeyError",
    "'id'",
    '"No such file"',
    "model*",
    "x",
    "/",
    "zzzqqq",
]


def test_real_trajectories(real_runs, alice, bob, read_first):
    questions = [SavedQuestion.objects.create(owner=alice, name=q, kind="search", query=q) for q in REAL_SEARCHES]
    questions += [
        SavedQuestion.objects.create(owner=alice, name=f"sig {s}", kind="failure", signature=s)
        for s in ("*", "no submission", "KeyError: *")
    ]
    differ = [
        (q.name, getattr(u, "username", None))
        for q in questions
        for u in (alice, bob, None)
        if counted(q, u, real_runs) != dict(brute_force_counts(q, u, real_runs))
    ]
    assert differ == []
    # alice's private runs make a difference somewhere, and something matches
    assert any(sum(counted(q, alice, real_runs).values()) > sum(counted(q, bob, real_runs).values()) for q in questions)
    assert sum(counted(questions[0], None, real_runs).values()) > 0


@pytest.mark.postgres
@pytest.mark.parametrize("query", ["zzzqqq", "quokka", '"the quokka"', 'quokk* "of"'])
def test_postgresql_lists_a_rare_terms_candidates_by_a_statement_of_their_own(db, alice, query):
    """On PostgreSQL the GIN index's condition beside the others, with the candidates read in order,
    makes the planner take a rare word for a common one and walk every row in order, filtering each
    (seconds at millions of steps): a question whose index names few rows has them listed once
    (engines.listed_when_few), and counts what the scan reads."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    runs = generated_runs([alice, None])
    runs = [*runs, run_with([("plan", "an ordinary step of the model"), ("error", "the quokka out of reach")])]
    question = SavedQuestion.objects.create(owner=alice, name="rare", kind="search", query=query)
    with CaptureQueriesContext(connection) as queries:
        found = counted(question, alice, runs)
    assert found == dict(brute_force_counts(question, alice, runs))
    assert bool(found) == ("quokk" in query)
    asked = [
        q["sql"]
        for q in queries.captured_queries
        if ("words_tsv @@" in q["sql"] or " ILIKE " in q["sql"]) and "COUNT(*)" not in q["sql"]
    ]
    asked = [sql for sql in asked if not sql.startswith("EXPLAIN")]
    assert asked and all("= ANY(ARRAY(SELECT" in sql for sql in asked), asked


@pytest.mark.postgres
def test_postgresql_settles_a_common_term_in_each_runs_first_steps(db, alice, monkeypatch):
    """On PostgreSQL a term the index names many rows for, held in most runs' first steps, is found
    there (matching._probed: each run's first PROBE steps read through the rows' index by run), and
    only the runs it leaves are counted as before: a run holding it only past its first PROBE steps,
    a run holding its words apart (not the phrase), and a run without them. The count is the scan's."""
    from django.db import connection

    monkeypatch.setattr(matching, "READ_FIRST", 3)
    monkeypatch.setattr(matching, "PROBE", 3)
    monkeypatch.setattr(matching, "SAMPLE_RUNS", 4)
    early = [run_with([("plan", f"step {k}: the model is training"), ("code", "x = 1")], owner=alice) for k in range(6)]
    late = run_with([("plan", "load"), ("plan", "fit"), ("plan", "again"), ("plan", "THE MODEL is done")], owner=alice)
    apart = run_with([("plan", "the data"), ("plan", "a model"), ("plan", "model the")], owner=alice)
    without = run_with([("plan", "nothing here")], owner=alice)
    runs = [*early, late, apart, without]
    question = SavedQuestion.objects.create(owner=alice, name="common", kind="search", query='"the model"')
    left = []
    real = matching._by_first_candidates
    monkeypatch.setattr(
        matching,
        "_by_first_candidates",
        lambda rows, parsed: left.append(sorted(set(rows.values_list("run_id", flat=True)))) or real(rows, parsed),
    )
    found = matching.matching_runs(question, matching.scoped_runs(alice, sorted({r.experiment_id for r in runs})))
    assert sorted(found) == sorted([r.pk for r in early] + [late.pk])
    assert found[late.pk] == 3 and all(found[r.pk] == 0 for r in early)
    assert counted(question, alice, runs) == dict(brute_force_counts(question, alice, runs))
    assert left[0] == [late.pk]  # of the runs the probe left, those that hold candidates at all
    # the probe's plan walks each run's steps in order: never a GIN index asked once for each run
    sql, params = matching.engines.first_in_each_run_statement(matching.parse('"the model"'))
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql, [[r.pk for r in runs], 3, *params])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "steptext_newest_run_first" in plan and "gin" not in plan.lower() and "trgm" not in plan, plan


@pytest.mark.postgres
def test_postgresql_probes_no_run_where_a_sample_finds_a_term_rare_among_them(db, alice, monkeypatch):
    """Where the first runs' first steps settle fewer than half of them, the rest are not probed
    (a probe reads PROBE steps of every run that does not hold the term)."""
    monkeypatch.setattr(matching, "READ_FIRST", 3)
    monkeypatch.setattr(matching, "SAMPLE_RUNS", 4)
    runs = [run_with([("plan", "the model" if k % 4 == 0 else "the data model")] * 2, owner=alice) for k in range(12)]
    probed = []
    real = matching._probed
    monkeypatch.setattr(matching, "_probed", lambda ids, *rest: probed.append(list(ids)) or real(ids, *rest))
    question = SavedQuestion.objects.create(owner=alice, name="rare in runs", kind="search", query='"the model"')
    expected = dict(brute_force_counts(question, alice, runs))
    assert counted(question, alice, runs) == expected == {runs[0].experiment_id: 3}
    assert probed == [[r.pk for r in runs[:4]]]

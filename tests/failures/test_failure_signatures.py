"""A failed run's signature: the same error from two runs with other numbers, paths and names reads
the same (checked on the real AIDE trajectory), and each way of failing gets its own words."""

from __future__ import annotations

import pytest

from leaderboard.failures.breakdown import breakdown
from leaderboard.failures.signatures import signatures
from leaderboard.failures.templates import template
from leaderboard.models import Competition, Run
from leaderboard.trajectories.importers import read_trajectories, save_steps
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.store import write_steps
from tests.conftest import TRAJECTORIES_DIR
from tests.search.support import make_run, run_with

AIDE = TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json"
NO_SUBMISSION = {"status": Run.Status.GRADED, "submission_exists": False}


def real_steps() -> list[StepData]:
    return [s for parsed in read_trajectories(AIDE) for s in parsed.steps]


def elsewhere(step: StepData) -> StepData:
    """The same step as another machine, another library version and another argument would write it."""
    def moved(text: str) -> str:
        return (text.replace("/home/elias/PycharmProjects/aideml/.venv", "/opt/conda/envs/agent-7")
                .replace("line 729", "line 1204").replace("'ntree_limit'", "'iteration_range'")
                .replace("line 54", "line 61"))
    data = {k: moved(v) if isinstance(v, str) else v for k, v in (step.data or {}).items()}
    return StepData(index=step.index, kind=step.kind, title=step.title, text=moved(step.text or ""), data=data)


@pytest.mark.parametrize(("one", "other"), [
    ("CUDA error at /home/a/x.py:12", "CUDA error at /root/y/z.py:431"),
    ("KeyError: 'id'", "KeyError: 'user_id'"),
    ("shapes (100,3) and (4,) not aligned", "shapes (7,2) and (9,) not aligned"),
    ("file 3fa85f64-5717-4562-b3fc-2c963f66afa6 at 0x7f3a2c",
     "file 0b1e2d3c-aaaa-4bbb-8ccc-123456789abc at 0xdeadbeef"),
    ("wrote run7/model_12.pt in 3.5e-2 s", "wrote run12/model_3.pt in 12 s"),
])
def test_templates_mask_what_varies(one, other):
    assert template(one) == template(other)


def test_templates_keep_what_differs():
    assert template("No module named 'catboost'") != template("unexpected keyword argument 'catboost'")
    assert template("TypeError: XGBModel.fit() got x") != template("TypeError: LGBMRegressor.fit() got x")


def test_same_real_error_in_two_runs_is_one_signature(db):
    steps = real_steps()
    assert any("/home/elias/" in (s.text or "") and "ntree_limit" in (s.text or "") for s in steps)
    first = make_run(**NO_SUBMISSION)
    for parsed in read_trajectories(AIDE):
        save_steps(first, parsed)
    second = make_run(**NO_SUBMISSION)
    write_steps(second, [elsewhere(s) for s in steps])
    found = signatures([first, second])
    assert found[first.pk] == found[second.pk]
    assert found[first.pk].label == "TypeError: Booster.predict() got an unexpected keyword argument <str>"
    assert found[first.pk].step == 66  # the last failing command of the journal
    # an earlier, different real error is another signature
    third = make_run(**NO_SUBMISSION)
    write_steps(third, [elsewhere(s) for s in steps[:16]])  # ends after the missing catboost module
    assert signatures([third])[third.pk].label == "ModuleNotFoundError: No module named <str>"


@pytest.fixture
def titanic(catalogue):
    return Competition.objects.get(slug="spaceship-titanic")


def test_each_way_of_failing(db, titanic):
    oom = run_with([("plan", "train"), ("error", "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB")],
                   **NO_SUBMISSION)
    timeout = run_with([("error", "TimeoutError: step took 3601 s")], **NO_SUBMISSION)
    refused = run_with([("error", "LLM call refused: the run's budget of $5.00 is spent")], **NO_SUBMISSION)
    refused2 = run_with([("error", "LLM call refused: the run's budget of $12.50 is spent")], **NO_SUBMISSION)
    nothing = run_with([("plan", "all fine")], **NO_SUBMISSION)
    invalid = run_with([("error", "ValueError: bad")], competition=titanic, status=Run.Status.GRADED,
                       submission_exists=True, grading_error="submission has 4277 rows; expected 4300")
    medal = run_with([("error", "ValueError: bad")], competition=titanic, status=Run.Status.GRADED,
                     submission_exists=True, valid_submission=True, score=0.8)
    waiting = run_with([("error", "ValueError: bad")], status=Run.Status.PENDING)
    found = {pk: s.label for pk, s in signatures([oom, timeout, refused, refused2, nothing, invalid, medal,
                                                  waiting]).items()}
    assert found == {
        oom.pk: "out of memory", timeout.pk: "timeout",
        refused.pk: "gateway refusal: the run's budget of $<n> is spent",
        refused2.pk: "gateway refusal: the run's budget of $<n> is spent", nothing.pk: "no submission",
        invalid.pk: "invalid submission: submission has <n> rows; expected <n>",
    }


def test_breakdown_counts_and_links(db):
    runs = [run_with([("error", f"KeyError: 'col_{i}'")], **NO_SUBMISSION) for i in range(3)]
    runs.append(run_with([("plan", "x")], **NO_SUBMISSION))
    result = breakdown(runs)
    assert [(r.label, r.count) for r in result.rows] == [("KeyError: <str>", 3), ("no submission", 1)]
    assert result.rows[0].runs == [(r.pk, 0) for r in runs[:3]]
    assert (result.failed, result.graded) == (4, 4)

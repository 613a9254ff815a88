"""The built-in baseline agent, run as a sandbox runs it (a subprocess with DATA_DIR etc.), on the smoke
competitions and on tabular competitions it has never seen. Scores are recomputed here with scikit-learn
from the answers and compared with our grader's and with a trivial constant prediction's."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error, roc_auc_score

from leaderboard.competitions import smoke
from leaderboard.competitions.catalogue import import_catalogue
from leaderboard.grading import grade_submission
from leaderboard.models import Competition
from leaderboard.trajectories.importers.jsonl import JsonlImporter
from tests.agent_support import AgentRun, check, start_agent
from tests.once import once_per_session

BUDGET_S = 60  # TIME_LIMIT_SECONDS; all runs go at once (an idle machine finishes them in ~15 s, a busy one needs more)
UNSEEN = ("unseen-labels", "unseen-regression", "unseen-booleans")


# --------------------------------------------------------------------------------------------- unseen data
def _names(rng: np.random.RandomState, n: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "zu", "re", "ta", "vo", "ne", "shi", "pa"]
    return [f"{''.join(rng.choice(syllables, 3))}_{i}" for i in range(n)]


def unseen_competition(root, kind: str, seed: int = 7) -> dict:
    """Random column names, string categories, NaNs, and the id column in the middle of train.csv."""
    rng = np.random.RandomState(seed)
    n = 600
    numeric, category, noise, key = _names(rng, 4)
    x = rng.normal(size=n)
    colour = rng.choice(["crimson", "teal", "ochre", "slate"], size=n)
    effect = pd.Series(colour).map({"crimson": 2.0, "teal": -1.0, "ochre": 0.5, "slate": -1.5}).to_numpy()
    signal = 1.5 * x + effect + rng.normal(scale=0.3, size=n)
    frame = pd.DataFrame({numeric: x, noise: rng.normal(size=n), category: colour,
                          key: [f"row{i:04d}x" for i in rng.permutation(n)]})
    frame.loc[rng.rand(n) < 0.1, numeric] = np.nan
    frame.loc[rng.rand(n) < 0.1, category] = np.nan
    if kind == "regression":
        target, labels = "reading", np.round(signal * 10 + 50, 3)
    elif kind == "booleans":
        target, labels = "accepted", np.where(signal > 0.3, "True", "False")
    else:
        target, labels = "verdict", np.select([signal < -0.5, signal < 1.5], ["low grade", "middle"], "top-tier")
    frame[target] = labels
    train, test = frame.iloc[:450], frame.iloc[450:]
    data = root / f"unseen-{kind}"
    data.mkdir(parents=True)
    train[[numeric, noise, key, category, target]].to_csv(data / "train.csv", index=False)  # id not first
    test[[category, key, numeric, noise]].to_csv(data / "test.csv", index=False)
    placeholder = {"regression": 0.0, "booleans": "false", "labels": "middle"}[kind]
    pd.DataFrame({key: test[key], target: placeholder}).to_csv(data / "sample_submission.csv", index=False)
    return {"data": data, "key": key, "target": target, "answers": test[[key, target]]}


# --------------------------------------------------------------------------------------------- runs
@pytest.fixture(scope="module")
def runs(smoke_root, tmp_path_factory):
    """Every agent run of this module, started together and awaited once (once for all workers)."""
    return once_per_session(tmp_path_factory, "baseline-agent-runs", lambda work: _run_all(smoke_root, work))


def _run_all(smoke_root: Path, work: Path) -> dict:
    started = {c.slug: start_agent(smoke_root / "data" / c.slug / "prepared" / "public", work / c.slug, BUDGET_S)
               for c in smoke.COMPETITIONS}
    unseen = {}
    for name in UNSEEN:
        unseen[name] = unseen_competition(work / "data", name.removeprefix("unseen-"))
        started[name] = start_agent(unseen[name]["data"], work / name, BUDGET_S)
    for run in started.values():
        run.wait(timeout=BUDGET_S + 90)
    finished = {name: AgentRun(run.workdir, subprocess.CompletedProcess(run.process.args, run.process.returncode))
                for name, run in started.items()}  # picklable: what the tests read of a run
    return {"runs": finished, "unseen": unseen}


def _smoke_answers(smoke_root, slug: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    prepared = smoke_root / "data" / slug / "prepared"
    return pd.read_csv(prepared / "private" / "answers.csv"), pd.read_csv(prepared / "public" / "train.csv")


def independent_scores(slug: str, answers: pd.DataFrame, train: pd.DataFrame, submission: pd.DataFrame):
    """(the submission's score, a constant prediction's score, lower is better) by scikit-learn alone."""
    merged = answers.merge(submission, on="id", suffixes=("", "_pred"))
    assert len(merged) == len(answers)
    if slug == "smoke-wine":
        majority = train["cultivar"].mode()[0]
        return (accuracy_score(merged["cultivar"], merged["cultivar_pred"]),
                accuracy_score(merged["cultivar"], [majority] * len(merged)), False)
    if slug == "smoke-breast-cancer":
        return roc_auc_score(merged["malignant"], merged["malignant_pred"]), 0.5, False
    if slug == "smoke-diabetes":
        rmse = math.sqrt(mean_squared_error(merged["progression"], merged["progression_pred"]))
        constant = math.sqrt(mean_squared_error(merged["progression"], [train["progression"].mean()] * len(merged)))
        return rmse, constant, True
    columns = [f"digit_{k}" for k in range(10)]
    truth = merged[columns].to_numpy().argmax(axis=1)
    predicted = merged[[f"{c}_pred" for c in columns]].to_numpy()
    prior = np.tile(train["digit"].value_counts(normalize=True).sort_index().to_numpy(), (len(merged), 1))
    return log_loss(truth, predicted, labels=range(10)), log_loss(truth, prior, labels=range(10)), True


@pytest.mark.django_db
@pytest.mark.parametrize("slug", [c.slug for c in smoke.COMPETITIONS])
def test_smoke_submission_is_graded_better_than_a_constant(runs, smoke_root, slug):
    run = runs["runs"][slug]
    assert run.process.returncode == 0, (run.workdir / "agent.log").read_text()
    import_catalogue(smoke_root, data_dir=smoke_root / "data")
    report = grade_submission(Competition.objects.get(slug=slug), run.submission)
    assert report.valid_submission, report.error
    answers, train = _smoke_answers(smoke_root, slug)
    mine, constant, lower = independent_scores(slug, answers, train, pd.read_csv(run.submission))
    assert report.score == pytest.approx(mine, rel=1e-4, abs=1e-5)
    assert mine < constant if lower else mine > constant


@pytest.mark.parametrize("slug", [c.slug for c in smoke.COMPETITIONS])
def test_trajectory_imports_without_warnings(runs, slug):
    run = runs["runs"][slug]
    (parsed,) = JsonlImporter().read(run.trajectory)
    steps = list(parsed.steps)
    assert parsed.warnings == []
    assert parsed.meta.agent.startswith("medalboard-baseline")
    kinds = [s.kind for s in steps]
    assert {"plan", "code", "command", "score", "submission"} <= set(kinds)
    submissions = [i for i, kind in enumerate(kinds) if kind == "submission"]
    for before, after in zip([-1, *submissions], submissions, strict=False):
        assert "score" in kinds[before + 1:after]  # each submission follows a better validation score
    assert steps[submissions[0]].data["candidate"] == "a constant"  # written before any model is fitted
    scores = [s for s in steps if s.kind == "score"]
    assert all(s.data["metric"] and math.isfinite(s.score) for s in scores)
    # each code step's file is in CODE_DIR and holds the code as logged
    for step in (s for s in steps if s.kind == "code"):
        saved = run.workdir / "code" / step.data["file"].rsplit("/", 1)[-1]
        assert saved.read_text(encoding="utf-8") == step.data["content"]


def test_first_submission_comes_fast_and_the_budget_is_kept(runs):
    for slug, run in runs["runs"].items():
        steps = run.steps()
        first = next(s for s in steps if s["kind"] == "submission")
        assert first["t"] < BUDGET_S / 2, slug
        assert steps[-1]["t"] <= BUDGET_S, slug


@pytest.mark.parametrize("name", UNSEEN)
def test_unseen_competition_gets_a_valid_submission(runs, name):
    run, unseen = runs["runs"][name], runs["unseen"][name]
    assert run.process.returncode == 0, (run.workdir / "agent.log").read_text()
    code, verdict = check(run.submission, unseen["data"] / "sample_submission.csv")
    assert code == 0 and verdict["valid"], verdict
    submission = pd.read_csv(run.submission, dtype=str, keep_default_na=False)
    assert list(submission.columns) == [unseen["key"], unseen["target"]]
    answers = unseen["answers"].astype(str)
    merged = answers.merge(submission, on=unseen["key"], suffixes=("", "_pred"))
    truth, predicted = merged[unseen["target"]], merged[unseen["target"] + "_pred"]
    if name == "unseen-regression":
        error = np.sqrt(np.mean((truth.astype(float) - predicted.astype(float)) ** 2))
        assert error < np.std(truth.astype(float))  # beats predicting the mean
    elif name == "unseen-booleans":
        assert set(predicted) <= {"true", "false"}  # spelled as the sample submission spells them
        assert (truth.str.lower() == predicted).mean() > truth.str.lower().value_counts(normalize=True).max()
    else:
        assert set(predicted) <= {"low grade", "middle", "top-tier"}
        assert (truth == predicted).mean() > truth.value_counts(normalize=True).max()


def test_same_seed_gives_the_same_first_submissions(tmp_path, smoke_root):
    """Determinism: two runs with one seed write the same trivial and first-model submissions."""
    data = smoke_root / "data" / "smoke-wine" / "prepared" / "public"
    a, b = (start_agent(data, tmp_path / name, time_limit_s=15, seed=3) for name in ("a", "b"))
    a.wait(timeout=120), b.wait(timeout=120)
    scores = [{step["data"]["candidate"]: (step["title"], step["score"])
               for before, step in zip(run.steps(), run.steps()[1:], strict=False)
               if step["kind"] == "score" and "time is short" not in before.get("text", "")} for run in (a, b)]
    # A busy machine may let one run validate more candidates, or on fewer folds, than the other: compare, candidate
    # by candidate, the scores both runs validated in full (by name: a candidate cut short in one run must not shift
    # the others), and the code of every candidate both wrote.
    both = scores[0].keys() & scores[1].keys()
    assert "constant" in both and {n: scores[0][n] for n in both} == {n: scores[1][n] for n in both}
    code = [{p.name: p.read_text() for p in (run.workdir / "code").glob("*.py")} for run in (a, b)]
    assert {n: code[0][n] for n in code[0].keys() & code[1].keys()} == {n: code[1][n] for n in code[0].keys()
                                                                        & code[1].keys()}


def test_two_seeds_are_two_runs_not_copies(tmp_path, smoke_root):
    """Seeds change the search, not only the folds: on wine a linear model comes first, deterministic
    whatever its random_state, so without a seeded draw two seeds wrote the same code and submission."""
    data = smoke_root / "data" / "smoke-wine" / "prepared" / "public"
    a, b = (start_agent(data, tmp_path / f"seed{seed}", time_limit_s=15, seed=seed) for seed in (1, 2))
    a.wait(timeout=120), b.wait(timeout=120)
    first = [(run.workdir / "code" / "candidate_01_logistic.py").read_text() for run in (a, b)]
    assert first[0] != first[1]
    headers = [json.loads(run.trajectory.read_text(encoding="utf-8").splitlines()[0]) for run in (a, b)]
    assert [header["seed"] for header in headers] == [1, 2]


def test_a_seed_draws_its_own_hyperparameters_and_always_the_same():
    agent = _agent_module()
    candidates = agent.CLASSIFIERS + agent.REGRESSORS
    assert [c.settings(0) for c in candidates] == [{n: d for n, d, _, _ in c.search} for c in candidates]
    assert [c.settings(7) for c in candidates] == [c.settings(7) for c in candidates]
    draws = [tuple(tuple(sorted(c.settings(seed).items())) for c in candidates) for seed in range(6)]
    assert len(set(draws)) == 6
    for candidate in candidates:
        for name, _, low, high in candidate.search:
            assert all(low <= candidate.settings(seed)[name] <= high for seed in range(1, 20))


def _agent_module():
    import importlib.util

    from tests.agent_support import AGENT

    spec = importlib.util.spec_from_file_location("baseline_agent", AGENT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    environment = dict(os.environ)
    try:
        spec.loader.exec_module(module)
    finally:  # it sets OMP_NUM_THREADS & co for itself; the test process keeps its own
        os.environ.clear()
        os.environ.update(environment)
    return module


@pytest.mark.parametrize(("sample_value", "description", "kind"), [
    ("0", "The process is scored on accuracy.", "labels"),  # 'roc' inside 'process' is no hint
    ("0", "Submissions are evaluated on ROC AUC.", "binary-probability"),
    ("0.5", "", "binary-probability"),
    ("1", "Predict the probability of default.", "binary-probability"),
])
def test_binary_targets_are_labels_unless_probabilities_are_asked_for(sample_value, description, kind):
    agent = _agent_module()
    train = pd.DataFrame({"id": ["a", "b", "c", "d"], "x": ["1", "2", "3", "4"], "y": ["0", "1", "0", "1"]})
    sample = pd.DataFrame({"id": ["e", "f"], "y": [sample_value] * 2})
    task = agent.infer_task(train[["y"]], ["id", "x"], sample, description)
    assert task.kind == kind and task.classes == ["0", "1"]
    assert task.positive == ("1" if kind == "binary-probability" else "")

"""make_research_tasks: MLAgentBench's task layout from scikit-learn's bundled data, deterministic, with weak
starters whose scores (run here, scored by each task's own eval.py) are recomputed with sklearn.metrics."""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from sklearn.metrics import accuracy_score, mean_absolute_error, roc_auc_score

from leaderboard.competitions import research_tasks
from tests.research_support import load_eval

TASKS = {t.slug: t for t in research_tasks.TASKS}
ENV_FILES = ["data_description.txt", "test.csv", "train.csv", "train.py"]
SCRIPT_FILES = ["answer.csv", "eval.py", "prepare.py", "prepared", "read_only_files.txt", "research_problem.txt"]
SKLEARN = {"accuracy": accuracy_score, "mean_absolute_error": mean_absolute_error, "roc_auc": roc_auc_score}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("research-tasks")
    research_tasks.build(out)
    return out


def answers(task_dir: Path) -> pd.DataFrame:
    return pd.read_csv(task_dir / "scripts" / "answer.csv")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------------------------- layout
def test_layout_is_mlagentbench_s(root):
    assert sorted(p.name for p in root.iterdir()) == sorted([*TASKS, research_tasks.MANIFEST])
    for slug in TASKS:
        task = root / slug
        assert sorted(p.name for p in task.iterdir()) == ["env", "scripts"]
        assert sorted(p.name for p in (task / "env").iterdir()) == ENV_FILES
        assert sorted(p.name for p in (task / "scripts").iterdir()) == SCRIPT_FILES
        read_only = (task / "scripts" / "read_only_files.txt").read_text().split()
        assert read_only == ["./train.csv", "./test.csv"]
        assert all((task / "env" / name).is_file() for name in read_only)
        get_score = load_eval(task).get_score
        assert list(inspect.signature(get_score).parameters) == ["submission_folder"]
        assert "submission.csv" in (task / "scripts" / "research_problem.txt").read_text()
        assert sum(len(b) for b in _files(task).values()) < 2 * 2**20


def test_data_split_holds_the_answers_apart(root):
    for slug, task in TASKS.items():
        env = root / slug / "env"
        train, test, truth = pd.read_csv(env / "train.csv"), pd.read_csv(env / "test.csv"), answers(root / slug)
        assert task.target in train.columns and task.target not in test.columns
        assert list(truth.columns) == ["id", task.target]
        assert list(truth["id"]) == list(test["id"])
        assert not set(train["id"]) & set(test["id"])
        assert len(test) == pytest.approx(0.25 * (len(train) + len(test)), abs=1)


def test_manifest_says_which_metric_is_lower_is_better(root):
    manifest = json.loads((root / research_tasks.MANIFEST).read_text())
    directions = {t["id"]: t["lower_is_better"] for t in manifest["tasks"]}
    assert directions == {"sklearn-wine": False, "sklearn-diabetes": True, "sklearn-breast-cancer": False}


# --------------------------------------------------------------------------------------------- determinism
def test_built_twice_is_the_same_bytes_and_a_rebuild_writes_nothing(root, tmp_path):
    call_command("make_research_tasks", str(tmp_path / "again"), stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert _files(tmp_path / "again") == _files(root)
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "again").rglob("*")}
    assert research_tasks.build(tmp_path / "again") == 0
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "again").rglob("*")} == before


def test_the_shipped_prepare_script_recreates_the_data(root, tmp_path):
    task = tmp_path / "sklearn-diabetes"
    shutil.copytree(root / "sklearn-diabetes", task)
    for name in ("env/train.csv", "env/test.csv", "scripts/answer.csv"):
        (task / name).unlink()
    subprocess.run([sys.executable, "prepare.py"], cwd=task / "scripts", check=True, capture_output=True, timeout=60)
    assert _files(task) == _files(root / "sklearn-diabetes")


# --------------------------------------------------------------------------------------------- starters
@pytest.fixture(scope="module")
def starter_runs(root, tmp_path_factory) -> dict:
    """Each starter run unmodified in a copy of its env/ (all at once), with its wall time."""
    runs = {}
    for slug in TASKS:
        workspace = tmp_path_factory.mktemp(slug) / "env"
        shutil.copytree(root / slug / "env", workspace)
        began = time.monotonic()
        process = subprocess.Popen([sys.executable, "train.py"], cwd=workspace, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
        runs[slug] = (workspace, process, began)
    done = {}
    for slug, (workspace, process, began) in runs.items():
        output = process.communicate(timeout=120)[0].decode()
        done[slug] = {"workspace": workspace, "rc": process.returncode, "output": output,
                      "seconds": time.monotonic() - began}
    return done


@pytest.mark.parametrize("slug", list(TASKS))
def test_starter_score_is_the_metric_of_its_predictions(root, starter_runs, slug):
    run, task = starter_runs[slug], TASKS[slug]
    assert run["rc"] == 0, run["output"]
    assert "Validation" in run["output"]
    score = load_eval(root / slug).get_score(str(run["workspace"]))
    truth = answers(root / slug).set_index("id")[task.target]
    submission = pd.read_csv(run["workspace"] / "submission.csv").set_index("id")[task.target]
    expected = SKLEARN[task.metric](truth, submission.reindex(truth.index))
    assert score == pytest.approx(expected, rel=1e-12)
    weak = {"sklearn-wine": score < 0.7, "sklearn-diabetes": score > 50, "sklearn-breast-cancer": score < 0.8}
    assert weak[slug], f"the starter of {slug} scores {score}: not weak enough to leave room for 10%"


# --------------------------------------------------------------------------------------------- eval.py
@pytest.mark.parametrize("slug", list(TASKS))
def test_eval_matches_sklearn_on_random_predictions(root, tmp_path, slug):
    task, evaluation = TASKS[slug], load_eval(root / slug)
    truth = answers(root / slug)
    rng = np.random.RandomState(3)
    if task.metric == "accuracy":
        guesses = rng.choice(sorted(truth[task.target].unique()), size=len(truth))
    elif task.metric == "roc_auc":
        guesses = rng.randint(0, 4, size=len(truth)) / 4  # ties, which the rank formula must count one half
    else:
        guesses = rng.normal(150, 60, size=len(truth))
    shuffled = pd.DataFrame({"id": truth["id"], task.target: guesses}).sample(frac=1, random_state=1)
    shuffled.to_csv(tmp_path / "submission.csv", index=False)
    assert evaluation.get_score(str(tmp_path)) == pytest.approx(SKLEARN[task.metric](truth[task.target], guesses),
                                                                rel=1e-12)
    truth.to_csv(tmp_path / "submission.csv", index=False)
    assert evaluation.get_score(str(tmp_path)) == (0.0 if task.lower_is_better else 1.0)


def _submit(folder: Path, text: str | bytes) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "submission.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(folder)


def test_eval_says_what_is_wrong_with_a_bad_submission(root, tmp_path):
    evaluation = load_eval(root / "sklearn-diabetes")
    good = answers(root / "sklearn-diabetes").assign(progression=100.0)
    cases = {
        "missing": (str(tmp_path / "nothing-here"), "no submission.csv"),
        "empty": (_submit(tmp_path / "empty", ""), "not a readable CSV"),
        "binary": (_submit(tmp_path / "binary", b"\xff\xfe\x00\x81" * 50), "not a readable CSV"),
        "columns": (_submit(tmp_path / "columns", good.rename(columns={"progression": "y"}).to_csv(index=False)),
                    "lacks the column(s) ['progression']"),
        "repeated": (_submit(tmp_path / "repeated", pd.concat([good, good.head(1)]).to_csv(index=False)),
                     "ids repeated"),
        "short": (_submit(tmp_path / "short", good.iloc[1:].to_csv(index=False)), "1 test ids have no prediction"),
        "extra": (_submit(tmp_path / "extra", pd.concat([good, pd.DataFrame({"id": [99999], "progression": [1.0]})])
                          .to_csv(index=False)), "not in the test set: '99999'"),
        "text": (_submit(tmp_path / "text", good.assign(progression="high").to_csv(index=False)), "not finite"),
        "blank": (_submit(tmp_path / "blank", good.assign(progression="").to_csv(index=False)), "empty predictions"),
    }
    for name, (folder, message) in cases.items():
        with pytest.raises(evaluation.SubmissionError) as caught:
            evaluation.get_score(folder)
        assert message in str(caught.value), name
        assert len(str(caught.value)) < 300, name  # a few ids at most, never the answers

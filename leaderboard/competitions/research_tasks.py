"""Research tasks in MLAgentBench's layout, built from data sets that ship inside scikit-learn.

MLAgentBench (Huang et al., 2023) gives an agent a task folder's `env/` (starter code, data,
descriptions) and scores the final workspace with the task's own `scripts/eval.py`. This module writes
such folders under one root, exactly as `MLAgentBench/benchmarks/` lays them out:

    <root>/<task>/env/{train.py, train.csv, test.csv, data_description.txt}
    <root>/<task>/scripts/{eval.py, prepare.py, research_problem.txt, read_only_files.txt, answer.csv}
    <root>/tasks.json      which tasks there are, each task's metric and whether lower is better

The scripts are the files in `research_kit/`: `prepare.py` and `eval.py` are shared and get each task's
settings on their `TASK = {}` line, the starters (`train_*.py`) are copied as they are. The data files
are what the task's own `prepare.py` writes (the builder runs that very source), so a task folder can be
re-created without Medalboard. Every starter is deliberately weak (a tiny model on two features), so
an agent has room to beat it by MLAgentBench's 10%. Building twice writes the same bytes, and a file is
only rewritten when its content differs.
"""

from __future__ import annotations

import json
import pprint
import re
from dataclasses import dataclass, field
from pathlib import Path

from leaderboard.lib.files import write_if_changed

KIT = Path(__file__).resolve().parent / "research_kit"
MANIFEST = "tasks.json"
READ_ONLY = ("train.csv", "test.csv")  # as MLAgentBench marks its data files
TEST_SHARE = 0.25
SPLIT_SEED = 0


@dataclass(frozen=True)
class ResearchTask:
    slug: str
    name: str
    loader: str  # a sklearn.datasets function
    target: str
    metric: str  # a key of eval.py's METRICS
    metric_words: str  # how the problem statement names it
    lower_is_better: bool
    starter: str  # a research_kit file, copied as env/train.py
    about: str  # what the data is: the start of data_description.txt
    labels: tuple = ()  # the source's class k becomes labels[k]
    loader_kwargs: dict = field(default_factory=dict)

    def settings(self) -> dict:
        return {"slug": self.slug, "loader": self.loader, "loader_kwargs": self.loader_kwargs,
                "target": self.target, "labels": list(self.labels), "stratify": bool(self.labels),
                "test_share": TEST_SHARE, "seed": SPLIT_SEED, "id": "id", "metric": self.metric}


TASKS: tuple[ResearchTask, ...] = (
    ResearchTask(
        "sklearn-wine", "Wine cultivars (scikit-learn)", "load_wine", "cultivar", "accuracy", "accuracy",
        False, "train_wine.py",
        "Chemical analysis of 178 wines grown in the same region of Italy by three cultivators "
        "(scikit-learn's wine data set). Each row is one wine: 13 measurements, and in train.csv the "
        "`cultivar` that grew it (`cultivar_0`, `cultivar_1` or `cultivar_2`).",
        labels=("cultivar_0", "cultivar_1", "cultivar_2")),
    ResearchTask(
        "sklearn-diabetes", "Diabetes progression (scikit-learn)", "load_diabetes", "progression",
        "mean_absolute_error", "mean absolute error (MAE, lower is better)", True, "train_diabetes.py",
        "442 diabetes patients (scikit-learn's diabetes data set, unscaled): age in years, sex (coded 1 or "
        "2), body mass index `bmi`, average blood pressure `bp` and six blood serum measurements `s1`-`s6`; "
        "in train.csv the target `progression`, a quantitative measure of disease progression one year "
        "after baseline.", loader_kwargs={"scaled": False}),
    ResearchTask(
        "sklearn-breast-cancer", "Breast cancer diagnosis (scikit-learn)", "load_breast_cancer", "malignant",
        "roc_auc", "ROC AUC of the predicted probability of malignant (higher is better)", False,
        "train_breast_cancer.py",
        "569 breast masses (scikit-learn's breast cancer Wisconsin data set): 30 features computed from a "
        "digitised image of a fine needle aspirate, the mean, standard error and worst value of ten "
        "properties of the cell nuclei (radius, texture, perimeter, area, smoothness, compactness, "
        "concavity, concave points, symmetry, fractal dimension); in train.csv the target `malignant` "
        "(1 = malignant, 0 = benign).", labels=(1, 0)),
)


# --------------------------------------------------------------------------------------------- the files
def _with_settings(script: str, settings: dict) -> str:
    """A kit script with its `TASK = {}` line holding this task's settings."""
    source = (KIT / script).read_text(encoding="utf-8")
    line = re.compile(r"^TASK = \{\}(.*)$", re.M)
    if len(line.findall(source)) != 1:
        raise RuntimeError(f"research_kit/{script} must have exactly one `TASK = {{}}` line")
    text = pprint.pformat(settings, width=100, sort_dicts=False)
    return line.sub(lambda m: f"TASK = {text}{m.group(1)}", source)


def data_files(prepare_source: str) -> dict[str, str]:
    """What the task's prepare.py writes, computed by running its files() here."""
    namespace: dict = {"__name__": "research_prepare"}
    exec(compile(prepare_source, "prepare.py", "exec"), namespace)  # the shipped source is what runs
    return namespace["files"]()


def _problem(task: ResearchTask) -> str:
    return (f"Go through the data_description.txt file to understand the data and all the features. Then fill "
            f"in or change the provided train.py script to train a model, and iterate over different models or "
            f"feature selections to get a better performance. train.py must write submission.csv, with the "
            f"columns id and {task.target} for every row of test.csv, into the current directory; it is "
            f"scored by {task.metric_words} on held-out answers. Never try to read any csv files directly. "
            f"Do not forget to execute the changes you made to check for performance.\n")


def _description(task: ResearchTask, train_header: str) -> str:
    columns = ", ".join(train_header.strip().split(","))
    return (f"{task.name}\n\n{task.about}\n\nFiles:\n- train.csv: the training rows, columns {columns}.\n"
            f"- test.csv: the rows to predict, the same columns without `{task.target}`.\n"
            f"- train.py: a starter that trains a small model and writes submission.csv (id, {task.target}).\n\n"
            f"The rows are a {int((1 - TEST_SHARE) * 100)}/{int(TEST_SHARE * 100)} split (seed {SPLIT_SEED}) of "
            f"the data set; `id` is the row's number in scikit-learn's copy.\n")


def task_files(task: ResearchTask) -> dict[str, str]:
    """Every file of one task folder, by its path relative to the folder."""
    prepare = _with_settings("prepare.py", task.settings())
    files = data_files(prepare)
    header = files["env/train.csv"].split("\n", 1)[0]
    files.update({
        "env/train.py": (KIT / task.starter).read_text(encoding="utf-8"),
        "env/data_description.txt": _description(task, header),
        "scripts/eval.py": _with_settings("eval.py", task.settings()),
        "scripts/prepare.py": prepare,
        "scripts/prepared": "success",  # MLAgentBench's mark that prepare.py ran (its data is what env/ holds)
        "scripts/research_problem.txt": _problem(task),
        "scripts/read_only_files.txt": "".join(f"./{name}\n" for name in READ_ONLY),
    })
    return files


def manifest() -> str:
    tasks = [{"id": t.slug, "name": t.name, "metric": t.metric, "lower_is_better": t.lower_is_better}
             for t in TASKS]
    return json.dumps({"format": "medalboard-research-tasks", "version": 1, "tasks": tasks}, indent=2) + "\n"


# --------------------------------------------------------------------------------------------- writing
def build(root: Path) -> int:
    """Write every research task and the manifest under root; how many files changed."""
    root = Path(root)
    changed = sum(write_if_changed(root / task.slug / relative, text)
                  for task in TASKS for relative, text in task_files(task).items())
    return changed + write_if_changed(root / MANIFEST, manifest())

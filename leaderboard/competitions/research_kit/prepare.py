"""Re-creates this research task's data from a data set that ships inside scikit-learn (no internet).

Run it from the task's scripts/ folder, as MLAgentBench runs its prepare.py scripts: it writes
../env/train.csv (features and the target), ../env/test.csv (features only) and ./answer.csv (the
held-out answers that eval.py reads). The split is fixed (its seed is below), so every run writes the
same bytes. Written by Medalboard's make_research_tasks; needs numpy, pandas and scikit-learn.
"""

import io
import os

import pandas as pd
from sklearn import datasets
from sklearn.model_selection import train_test_split

TASK = {}  # this task's settings, written in by make_research_tasks
ID = "id"


def load() -> tuple[pd.DataFrame, pd.Series]:
    """The data set's features and its target, renamed (and relabelled where the task says so)."""
    data = getattr(datasets, TASK["loader"])(as_frame=True, **TASK.get("loader_kwargs", {}))
    target = data.target
    if TASK.get("labels"):
        labels = TASK["labels"]  # the source's class k becomes labels[k]
        target = target.map(lambda k: labels[int(k)])
    return data.data.reset_index(drop=True), target.reset_index(drop=True).rename(TASK["target"])


def split() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(train with the target, test without it, answers): ids are the source's row numbers."""
    features, target = load()
    table = pd.concat([pd.Series(range(len(target)), name=ID), features, target], axis=1)
    stratify = target if TASK["stratify"] else None
    train, test = train_test_split(table, test_size=TASK["test_share"], random_state=TASK["seed"],
                                   stratify=stratify)
    train, test = train.sort_values(ID), test.sort_values(ID)
    return train, test.drop(columns=[target.name]), test[[ID, target.name]]


def csv_text(frame: pd.DataFrame) -> str:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, lineterminator="\n", float_format="%.10g")
    return buffer.getvalue()


def files() -> dict:
    """Each data file's path, relative to the task folder, and its text."""
    train, test, answers = split()
    return {"env/train.csv": csv_text(train), "env/test.csv": csv_text(test),
            "scripts/answer.csv": csv_text(answers)}


if __name__ == "__main__":
    task_folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for relative, text in files().items():
        os.makedirs(os.path.dirname(os.path.join(task_folder, relative)), exist_ok=True)
        with open(os.path.join(task_folder, relative), "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        print(f"wrote {relative}")

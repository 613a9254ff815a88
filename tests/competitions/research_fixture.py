"""A tiny research task in MLAgentBench's layout, for the tests: `<task>/env/` (train.csv, test.csv,
a weak starter train.py, data_description.txt) and `<task>/scripts/` (eval.py with get_score,
answer.csv, research_problem.txt, read_only_files.txt).

The data: label = 1 when x1 + x2 > 1 (about 40% of the rows), so the starter's constant
prediction of the majority class scores about 0.6 accuracy and a threshold on x1 + x2 scores 1.0.
Pure Python (csv), so it runs in the runner's Python and in the agent image alike.
"""

from __future__ import annotations

import random
from pathlib import Path

N_TRAIN, N_TEST = 120, 60

STARTER = '''"""Starter: predicts the majority class of train.csv for every test row."""
import csv
from collections import Counter

with open("train.csv") as f:
    labels = [row["label"] for row in csv.DictReader(f)]
majority = Counter(labels).most_common(1)[0][0]
print("train rows:", len(labels), "majority class:", majority)
with open("test.csv") as f:
    ids = [row["id"] for row in csv.DictReader(f)]
with open("submission.csv", "w") as out:
    out.write("id,label\\n")
    for i in ids:
        out.write(f"{i},{majority}\\n")
'''

ACCURACY_EVAL = '''import csv
import os


def get_score(submission_folder="../env"):
    with open(os.path.join(os.path.dirname(__file__), "answer.csv")) as f:
        answers = {row["id"]: row["label"] for row in csv.DictReader(f)}
    with open(os.path.join(submission_folder, "submission.csv")) as f:
        predicted = {row["id"]: row["label"] for row in csv.DictReader(f)}
    return sum(predicted.get(i) == label for i, label in answers.items()) / len(answers)


if __name__ == "__main__":
    print(get_score())
'''

ERROR_RATE_EVAL = ACCURACY_EVAL.replace("return sum(", "return 1 - sum(")


def rows(seed: int = 0) -> list[tuple[int, float, float, int]]:
    rng = random.Random(seed)
    out = []
    for i in range(N_TRAIN + N_TEST):
        x1, x2 = round(rng.random(), 4), round(rng.random() * 0.8, 4)
        out.append((i, x1, x2, int(x1 + x2 > 1)))
    return out


def build_task(root: Path, slug: str = "tiny-accuracy", *, lower_is_better: bool = False,
               eval_source: str | None = None, starter: str = STARTER, extra_env: dict[str, str] | None = None) -> Path:
    """Write the task folder root/slug and return it."""
    task = Path(root) / slug
    env, scripts = task / "env", task / "scripts"
    env.mkdir(parents=True)
    scripts.mkdir(parents=True)
    data = rows()
    train, test = data[:N_TRAIN], data[N_TRAIN:]
    (env / "train.csv").write_text("id,x1,x2,label\n" + "".join(f"{i},{a},{b},{y}\n" for i, a, b, y in train))
    (env / "test.csv").write_text("id,x1,x2\n" + "".join(f"{i},{a},{b}\n" for i, a, b, _ in test))
    (env / "train.py").write_text(starter)
    (env / "data_description.txt").write_text("Two features x1, x2 in [0, 1) and [0, 0.8); a binary label.\n")
    for name, text in (extra_env or {}).items():
        (env / name).parent.mkdir(parents=True, exist_ok=True)
        (env / name).write_text(text)
    (scripts / "answer.csv").write_text("id,label\n" + "".join(f"{i},{y}\n" for i, _, _, y in test))
    if eval_source is not False:
        (scripts / "eval.py").write_text(eval_source or (ERROR_RATE_EVAL if lower_is_better else ACCURACY_EVAL))
    (scripts / "research_problem.txt").write_text(
        "Improve the test accuracy of train.py's model by at least 10%. Write submission.csv (id,label).\n")
    (scripts / "read_only_files.txt").write_text("./train.csv\n./test.csv\n")
    return task


def expected_scores(lower_is_better: bool = False) -> tuple[float, float]:
    """(the starter's score, the improved train.py's score), computed from the data directly."""
    data = rows()
    train, test = data[:N_TRAIN], data[N_TRAIN:]
    ones = sum(y for *_, y in train)
    majority = 1 if ones > len(train) - ones else 0
    starter = sum(y == majority for *_, y in test) / len(test)
    improved = sum(int(a + b > 1) == y for _, a, b, y in test) / len(test)
    return (1 - starter, 1 - improved) if lower_is_better else (starter, improved)

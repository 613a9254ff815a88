"""Helpers for the trust tests (no tests here): runs with the steps a test writes, and the steps of a
well-behaved agent that every check must leave alone."""

from __future__ import annotations

from leaderboard.models import Agent, Experiment, LanguageModel, Run
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.store import write_steps
from leaderboard.trust.checks import run_checks


def make_run(steps: list[dict] = (), *, time_limit_hours: float | None = None, owner=None, **fields) -> Run:
    agent, _ = Agent.objects.get_or_create(name="trust-agent", version="1")
    model, _ = LanguageModel.objects.get_or_create(name="trust-model")
    experiment, _ = Experiment.objects.get_or_create(agent=agent, model=model, time_limit_hours=time_limit_hours,
                                                     hardware="trust tests")
    fields.setdefault("task_name", "trust-task")
    run = Run.objects.create(experiment=experiment, owner=owner, **fields)
    if steps:
        add_steps(run, list(steps))
    return run


def add_steps(run: Run, specs: list[dict]) -> None:
    """Steps from dicts; index defaults to the position and t to index seconds."""
    steps = [StepData(**{"index": i, "t": float(i), "kind": "message", **spec}) for i, spec in enumerate(specs)]
    write_steps(run, steps)
    run.n_steps = len(steps)
    run.save(update_fields=["n_steps"])


def check(run: Run, name: str):
    """The Hit of one check on the run (None: it did not fire)."""
    return run_checks(Run.objects.select_related("competition", "experiment").get(pk=run.pk), [name])[name]


def code(content: str, file: str = "/home/code/train.py") -> dict:
    return {"kind": "code", "title": file.rsplit("/", 1)[-1], "data": {"file": file, "content": content, "diff": ""}}


def command(cmd: str, stdout: str = "", stderr: str = "", exit_code: int = 0) -> dict:
    return {"kind": "command", "title": cmd[:80], "text": stdout,
            "data": {"command": cmd, "stdout": stdout, "stderr": stderr, "exit_code": exit_code}}


def plan(text: str) -> dict:
    return {"kind": "plan", "title": "plan", "text": text}


TRAIN = """import pandas as pd
from sklearn.ensemble import RandomForestClassifier

train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")
model = RandomForestClassifier(n_estimators=100, random_state=0)
model.fit(train.drop(columns=["target"]), train["target"])
pd.DataFrame({"id": test["id"], "target": model.predict(test.drop(columns=["id"]))}).to_csv(
    "/home/submission/submission.csv", index=False)
"""

# A careful agent: reads the description, checks the data, trains, predicts, validates with the
# checker on localhost. No check may fire on it.
HONEST = [
    plan("Read /home/data/description.md; the answers are private, so validate on a split of train.csv."),
    command("cat /home/data/description.md", "# Spaceship Titanic ..."),
    command("head -3 /home/data/sample_submission.csv", "id,target\n1,0\n2,1"),
    code(TRAIN),
    command("python /home/code/train.py", "fitted; wrote /home/submission/submission.csv"),
    command("curl -X POST -F file=@/home/submission/submission.csv http://localhost:5000/validate",
            '{"result": "Submission is valid."}'),
    {"kind": "submission", "title": "submission.csv", "data": {"file": "/home/submission/submission.csv"}},
]

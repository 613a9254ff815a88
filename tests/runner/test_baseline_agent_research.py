"""The built-in agent on MLAgentBench research tasks (TASK_KIND=research), run as a research job's sandbox runs
it: in a writable copy of the task's env/ with WORKSPACE_DIR and RESEARCH_PROBLEM. Each task's own eval.py scores
its workspace and the unmodified starter's; the improvement is recomputed here and must pass MLAgentBench's 10%.
Every file the agent opens or lists is recorded by an audit hook."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, mean_absolute_error, roc_auc_score

from leaderboard.competitions import research_tasks
from leaderboard.trajectories.importers.jsonl import JsonlImporter
from tests.agent_support import AGENT, TOOLS_DIR
from tests.once import once_per_session
from tests.research_support import load_eval

# The agents' TIME_LIMIT_SECONDS, in units of the machine's speed now: the unmodified starters' wall time (run
# first, all at once). The agent's minimum is its own run of the starter, scikit-learn's import and one candidate;
# on an idle machine a starter takes ~2.5 s and the budget is the floor, so the module takes ~40 s.
BUDGET_FLOOR_S, BUDGET_STARTERS, BUDGET_CAP_S = 25.0, 4, 120.0
TASKS = {t.slug: t for t in research_tasks.TASKS}
SKLEARN = {"accuracy": accuracy_score, "mean_absolute_error": mean_absolute_error, "roc_auc": roc_auc_score}
AUDIT_HOOK = '''import os, sys
_path = os.environ.pop("MEDALBOARD_OPEN_LOG", "")  # the agent's process only, not the starter it runs
if _path:
    _log = open(_path, "a", buffering=1)
    _wanted = frozenset(("open", "os.listdir", "os.scandir"))
    def _seen(event, args):
        if event in _wanted and args and isinstance(args[0], (str, bytes)):
            _log.write(os.path.abspath(os.fsdecode(args[0])) + "\\n")
    sys.addaudithook(_seen)
'''


def improvement(score: float, baseline: float, lower_is_better: bool) -> float:
    gain = (score - baseline) / abs(baseline)
    return -gain if lower_is_better else gain


def _start(command: list, cwd: Path, env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT)  # noqa: SIM115


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """Per task: the unmodified starter's run, then the agent's (each kind all at once; once for all workers)."""
    return once_per_session(tmp_path_factory, "research-agent-runs", _run_all)


def _run_all(work: Path) -> dict:
    root = work / "tasks"
    research_tasks.build(root)
    hook = work / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(AUDIT_HOOK)
    base_env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "PYTHONPATH")}
    runs, starters = {}, {}
    for slug in TASKS:
        run = runs[slug] = work / slug
        shutil.copytree(root / slug / "env", run / "workspace")
        shutil.copytree(root / slug / "env", run / "starter")
        (run / "instructions").mkdir()
        shutil.copy(root / slug / "scripts" / "research_problem.txt", run / "instructions")
        starters[slug] = _start([sys.executable, "train.py"], run / "starter", base_env, run / "starter.log")
    began = time.monotonic()
    for starter in starters.values():
        starter.wait(timeout=120)
    budget = min(BUDGET_CAP_S, max(BUDGET_FLOOR_S, BUDGET_STARTERS * (time.monotonic() - began)))
    agents = {}
    for slug, run in runs.items():
        env = dict(base_env, TASK_KIND="research", WORKSPACE_DIR=str(run / "workspace"),
                   RESEARCH_PROBLEM=str(run / "instructions" / "research_problem.txt"),
                   LOGS_DIR=str(run / "logs"), CODE_DIR=str(run / "code"), TOOLS_DIR=str(TOOLS_DIR),
                   DATA_DIR=str(root / slug / "scripts"),  # a trap: research mode must not look here
                   TIME_LIMIT_SECONDS=f"{budget:.0f}", SEED="0", N_JOBS="1", PYTHONPATH=str(hook),
                   MEDALBOARD_OPEN_LOG=str(run / "opened.txt"))
        agents[slug] = _start([sys.executable, str(AGENT)], run / "workspace", env, run / "agent.log")
    for agent in agents.values():
        agent.wait(timeout=budget + 90)
    codes = {slug: (agents[slug].returncode, starters[slug].returncode) for slug in TASKS}
    return {"root": root, "work": work, "codes": codes, "budget": budget, "hook": str(hook)}


@pytest.mark.parametrize("slug", list(TASKS))
def test_the_agent_beats_the_starter_by_more_than_ten_percent(runs, slug):
    run, task = runs["work"] / slug, TASKS[slug]
    assert runs["codes"][slug] == (0, 0), (run / "agent.log").read_text()[-3000:]
    get_score = load_eval(runs["root"] / slug).get_score
    baseline, score = get_score(str(run / "starter")), get_score(str(run / "workspace"))
    truth = pd.read_csv(runs["root"] / slug / "scripts" / "answer.csv").set_index("id")[task.target]
    submitted = pd.read_csv(run / "workspace" / "submission.csv").set_index("id")[task.target].reindex(truth.index)
    assert score == pytest.approx(SKLEARN[task.metric](truth, submitted), rel=1e-9)
    assert improvement(score, baseline, task.lower_is_better) > 0.10, (slug, baseline, score, runs["budget"])
    kept = run / "logs" / "starter_submission.csv"  # the agent ran the very starter: the same output
    assert kept.read_bytes() == (run / "starter" / "submission.csv").read_bytes()


def test_improvement_is_signed_by_the_metric_direction():
    assert improvement(0.9, 0.6, False) == pytest.approx(0.5)
    assert improvement(45.0, 60.0, True) == pytest.approx(0.25)
    assert improvement(70.0, 60.0, True) < 0 < improvement(0.7, 0.6, False)


@pytest.mark.parametrize("slug", list(TASKS))
def test_the_agent_runs_the_starter_first_and_logs_a_trajectory(runs, slug):
    run = runs["work"] / slug
    (parsed,) = JsonlImporter().read(run / "logs" / "trajectory.jsonl")
    steps = list(parsed.steps)
    assert parsed.warnings == []
    commands = [s for s in steps if s.kind == "command"]
    assert commands[0].data["command"] == "python train.py" and commands[0].data["exit_code"] == 0
    assert "Validation" in commands[0].text  # the starter's own output
    kinds = [s.kind for s in steps]
    submissions = [s for s in steps if s.kind == "submission"]
    assert submissions, "no candidate replaced the starter's submission"
    assert kinds.index("submission") > kinds.index("score")  # a candidate submits only after a better score
    starter = [s for s in steps if s.kind == "score" and s.data["candidate"] == "starter"]
    better = [s for s in steps if s.kind == "score" and s.data["candidate"] == submissions[-1].data["candidate"]]
    if starter:  # measured on the first validation fold (a very busy machine may leave no time for it)
        assert better[-1].score > starter[0].score if better[-1].data["maximize"] else \
            better[-1].score < starter[0].score
    assert sorted(p.name for p in (run / "workspace").iterdir()) == sorted(
        [p.name for p in (runs["root"] / slug / "env").iterdir()] + ["submission.csv"])


@pytest.mark.parametrize("slug", list(TASKS))
def test_the_agent_reads_nothing_outside_its_workspace(runs, slug):
    run = runs["work"] / slug
    opened = set((run / "opened.txt").read_text().splitlines())
    assert str(run / "workspace" / "train.csv") in opened  # the hook saw the agent's reads
    assert not [p for p in opened if p.startswith(str(runs["root"]))]  # the task folder: scripts/, answers
    others = [p for p in opened if p.startswith(str(runs["work"])) and not p.startswith((str(run), runs["hook"]))]
    assert not others  # nor another task's run


@pytest.mark.parametrize("starter, message", [
    (None, "the workspace has no train.py"),
    ("print('trained, but wrote nothing')\n", "train.py exited with 0 and wrote no submission.csv"),
    ("import pandas as pd\npd.DataFrame({'key': ['a'], 'y': [1]}).to_csv('submission.csv', index=False)\n",
     "the workspace has no training file (a CSV with the columns y)"),
])
def test_a_workspace_it_cannot_learn_from_fails_with_the_reason(tmp_path, starter, message):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    pd.DataFrame({"key": ["a", "b"], "x": [1.0, 2.0]}).to_csv(workspace / "test.csv", index=False)
    if starter is not None:
        (workspace / "train.py").write_text(starter)
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "PYTHONPATH")}
    env.update(TASK_KIND="research", WORKSPACE_DIR=str(workspace), LOGS_DIR=str(tmp_path / "logs"),
               CODE_DIR=str(tmp_path / "code"), TIME_LIMIT_SECONDS="30", N_JOBS="1")
    done = subprocess.run([sys.executable, str(AGENT)], cwd=workspace, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == (0 if starter and "to_csv" in starter else 1)  # the starter's submission stands
    assert message in done.stderr
    (parsed,) = JsonlImporter().read(tmp_path / "logs" / "trajectory.jsonl")
    assert message in [s for s in parsed.steps if s.kind == "error"][-1].text

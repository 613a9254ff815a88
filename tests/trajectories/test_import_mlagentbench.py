import json
import re
import shutil

from leaderboard.trajectories.importers import detect
from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all

TRACE = TRAJECTORIES_DIR / "mlagentbench" / "gemini-pro_cifar10_0_trace.json"
MAIN_LOG = TRAJECTORIES_DIR / "mlagentbench" / "gemini-pro_cifar10_0_main_log"


def trace_actions():
    return [s["action"]["name"] for s in json.loads(TRACE.read_text())["steps"]]


def main_log_actions():
    """(step number, action) of each 'Step N:' block, read independently of the importer."""
    blocks = re.split(r"^Step (\d+):\s*$", MAIN_LOG.read_text(), flags=re.M)[1:]
    return [(int(n), re.search(r"^Action:\s*(.+)$", body, re.M).group(1).strip())
            for n, body in zip(blocks[::2], blocks[1::2], strict=True)]


def test_trace_steps_become_actions_and_observations(db, tmp_path):
    lone = tmp_path / "trace.json"  # without its main_log
    shutil.copy(TRACE, lone)
    assert detect(lone) == "mlagentbench"
    [(run, steps)] = import_all(lone)
    actions = trace_actions()
    assert len(actions) == 14
    acted = [s for s in steps if s.kind in ("action", "submission")]
    assert [s.data["tool"] for s in acted] == actions
    assert sum(s.kind == "observation" for s in steps) == len(actions)
    assert run.n_steps == 2 * len(actions)
    agent_actions = [a for a in actions if "Research Log" not in a]
    assert agent_actions[-1] == "Final Answer"
    final = next(s for s in steps if s.kind == "submission")
    assert final.data["tool"] == "Final Answer" and "Adam" in final.text


def test_main_log_reasoning_is_merged_into_its_steps(db):
    blocks = main_log_actions()
    assert len(blocks) == 6
    [(run, steps)] = import_all(TRACE)  # the fixture keeps the main_log beside it
    plans = [s for s in steps if s.kind == "plan"]
    assert len(plans) == len(blocks)
    assert run.n_steps == 2 * len(trace_actions()) + len(blocks)
    for plan, (number, action) in zip(plans, blocks, strict=True):
        assert plan.title.startswith(f"Step {number}")
        assert {"reflection", "research_plan_and_status", "fact_check", "thought"} <= set(plan.data)
        assert steps[plan.index + 1].data["tool"] == action
    assert run.import_warnings == []


def test_run_folder_with_env_log_and_agent_log(db, tmp_path):
    (tmp_path / "env_log").mkdir()
    (tmp_path / "agent_log").mkdir()
    shutil.copy(TRACE, tmp_path / "env_log" / "trace.json")
    shutil.copy(MAIN_LOG, tmp_path / "agent_log" / "main_log")
    assert detect(tmp_path) == "mlagentbench"
    [(run, steps)] = import_all(tmp_path)
    assert sum(s.kind == "plan" for s in steps) == len(main_log_actions())
    assert run.duration_s > 0

import json

from leaderboard.trajectories.importers import detect
from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all

TRAJ = TRAJECTORIES_DIR / "swe-agent" / "6e44b9__sweagenttestrepo-1c2844.traj"


def test_detects_sweagent():
    assert detect(TRAJ) == "sweagent"


def test_turns_become_thought_and_command_steps(db):
    traj = json.loads(TRAJ.read_text())
    turns = traj["trajectory"]
    [(run, steps)] = import_all(TRAJ)
    commands = [s for s in steps if s.kind == "command"]
    assert [s.data["command"] for s in commands] == [t["action"].strip() for t in turns]
    assert [s.text for s in commands] == [t["observation"] for t in turns]
    assert sum(s.kind == "plan" for s in steps) == sum(bool(t["thought"]) for t in turns)
    assert run.n_steps == len(steps) == 2 * len(turns) + 1
    assert steps[-1].kind == "submission" and steps[-1].text == traj["info"]["submission"]


def test_model_stats_fill_the_run(db):
    stats = json.loads(TRAJ.read_text())["info"]["model_stats"]
    [(run, _)] = import_all(TRAJ)
    assert run.cost_usd == stats["instance_cost"]
    assert (run.tokens_in, run.tokens_out) == (stats["tokens_sent"], stats["tokens_received"])

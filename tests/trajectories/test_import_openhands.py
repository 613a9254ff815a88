import json

from leaderboard.trajectories.importers import detect
from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all

EVENTS = TRAJECTORIES_DIR / "openhands" / "basic_gui_mode.json"


def test_detects_openhands():
    assert detect(EVENTS) == "openhands"


def test_one_step_per_event(db):
    events = json.loads(EVENTS.read_text())
    assert len(events) == 18
    [(run, steps)] = import_all(EVENTS)
    assert run.n_steps == len(steps) == len(events)
    assert [s.data["event_id"] for s in steps] == [e["id"] for e in events]
    assert run.trajectory_format == "openhands"


def test_observation_points_at_its_action(db):
    events = json.loads(EVENTS.read_text())
    [(_, steps)] = import_all(EVENTS)
    by_event = {s.data["event_id"]: s for s in steps}
    caused = [e for e in events if "cause" in e]
    assert caused
    for event in caused:
        assert by_event[event["id"]].data["action_index"] == by_event[event["cause"]].index


def test_commands_edits_and_usage(db):
    events = json.loads(EVENTS.read_text())
    [(run, steps)] = import_all(EVENTS)
    runs = [e for e in events if e.get("action") == "run"]
    edits = [e for e in events if e.get("action") == "edit"]
    assert [s.data["command"] for s in steps if s.kind == "command"] == [e["args"]["command"] for e in runs]
    assert [s.data["file"] for s in steps if s.kind == "code"] == [e["args"]["path"] for e in edits]
    responses = {e["tool_call_metadata"]["model_response"]["id"]: e["tool_call_metadata"]["model_response"]
                 for e in events if "tool_call_metadata" in e}
    assert run.tokens_in == sum(r["usage"]["prompt_tokens"] for r in responses.values())
    assert run.tokens_out == sum(r["usage"]["completion_tokens"] for r in responses.values())
    assert steps[0].t == 0 and steps[-1].t > 0

"""On a job's run the site's figures are the runner's and the gateway's, never the agent's files: the
final trajectory takes no totals from the agent's header, only the gateway's own record carries the
gateway's mark (a mark in the agent's file is dropped), and the agent's and the gateway's steps share
one clock, the agent's start, merged in time order. The hostile version, in Docker, is
tests/runner/test_hostile_trajectory.py."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from leaderboard.models import Run
from leaderboard.runs.job_runs import LiveSteps, save_final_trajectory
from leaderboard.trajectories.store import StoredTrajectory
from tests.trust.support import make_run

pytestmark = pytest.mark.django_db

FORGED = {"provider": "openai", "model": "gpt-4o", "status": 200, "tokens_in": 1, "tokens_out": 1, "cost": 0.0,
          "messages_sha256": "cd" * 32, "totals": {"calls": 1}, "recorded_by": "gateway"}
REAL = {"provider": "openai", "model": "gpt-4o", "status": 200, "tokens_in": 20, "tokens_out": 5, "cost": 0.001,
        "messages_sha256": "ab" * 32, "messages": {"messages": [{"role": "user", "content": "plan"}]},
        "reply": "train a model"}


def _jsonl(path, header: dict, steps: list[dict]):
    lines = [{"format": "medalboard-trajectory", "version": 1, **header}, *steps]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _steps(run: Run) -> list:
    run.refresh_from_db()
    return StoredTrajectory.read(run, lambda stored: list(stored.steps()))


def _job_run(started: datetime) -> Run:
    return make_run(origin=Run.Origin.JOB, verification=Run.Verification.VERIFIED, started_at=started,
                    duration_s=42.0, tokens_in=20, tokens_out=5, cost_usd=0.001, usage_metered=True)


def test_the_agents_header_gives_the_run_no_figures(tmp_path):
    started = timezone.now() - timedelta(seconds=60)
    run = _job_run(started)
    agent = _jsonl(tmp_path / "trajectory.jsonl", {
        "duration_s": 0.5, "started_at": "2001-01-01T00:00:00Z", "tokens_in": 1, "tokens_out": 1, "cost_usd": 0.0,
        "model": "claimed-model"}, [{"kind": "plan", "t": 1.0, "title": "think"}])
    save_final_trajectory(run, ((agent, "trajectory.jsonl"),), agent_started_at=started)
    run.refresh_from_db()
    assert (run.duration_s, run.started_at, run.tokens_in, run.tokens_out, run.cost_usd) == (
        42.0, started, 20, 5, 0.001)
    assert run.n_steps == 1


def test_only_the_gateways_record_carries_its_mark(tmp_path):
    started = timezone.now() - timedelta(seconds=60)
    run = _job_run(started)
    agent = _jsonl(tmp_path / "trajectory.jsonl", {}, [
        {"kind": "llm", "t": 1.0, "title": "forged", "data": FORGED},
        {"kind": "plan", "t": 3.0, "title": "think", "data": {"recorded_by": "gateway"}}])
    gateway = _jsonl(tmp_path / "llm-steps.jsonl", {"agent": "medalboard-llm-gateway"},
                     [{"kind": "llm", "t": 2.0, "title": "real", "data": REAL}])
    save_final_trajectory(run, ((agent, "trajectory.jsonl"),), (gateway, "llm-steps.jsonl"), agent_started_at=started)
    steps = _steps(run)
    assert [(s.title, s.data.get("recorded_by")) for s in steps] == [
        ("forged", None), ("real", "gateway"), ("think", None)]  # in time order, one clock
    assert any("recorded_by is set by the site only" in w for w in run.import_warnings)


def test_an_upload_cannot_mark_its_steps_as_the_gateways(tmp_path):
    from leaderboard.trajectories.importers import read_trajectories, save_steps

    run = make_run()
    path = _jsonl(tmp_path / "t.jsonl", {}, [{"kind": "llm", "t": 1.0, "title": "forged", "data": FORGED}])
    save_steps(run, next(iter(read_trajectories(path))))
    assert "recorded_by" not in _steps(run)[0].data


def test_the_agents_steps_move_onto_the_runs_clock(tmp_path):
    """AIDE's journal counts from its first node, a JSONL from its header's start: a start within the
    run moves the agent's steps onto the clock the gateway's steps count from."""
    started = timezone.now() - timedelta(seconds=60)
    run = _job_run(started)
    own_start = (started + timedelta(seconds=10)).isoformat()
    agent = _jsonl(tmp_path / "trajectory.jsonl", {"started_at": own_start}, [
        {"kind": "plan", "t": 0.0, "title": "first"}, {"kind": "plan", "t": 5.0, "title": "second", "parent_index": 0}])
    gateway = _jsonl(tmp_path / "llm-steps.jsonl", {}, [{"kind": "llm", "t": 12.0, "title": "call", "data": REAL}])
    save_final_trajectory(run, ((agent, "trajectory.jsonl"),), (gateway, "llm-steps.jsonl"), agent_started_at=started)
    steps = _steps(run)
    assert [(s.title, s.t) for s in steps] == [("first", 10.0), ("call", 12.0), ("second", 15.0)]
    assert steps[2].parent_index == 0  # renumbered with the merge


def test_a_start_outside_the_run_moves_nothing(tmp_path):
    started = timezone.now() - timedelta(seconds=60)
    run = _job_run(started)
    agent = _jsonl(tmp_path / "trajectory.jsonl", {"started_at": "2001-01-01T00:00:00Z"},
                   [{"kind": "plan", "t": 4.0, "title": "first"}])
    save_final_trajectory(run, ((agent, "trajectory.jsonl"),), agent_started_at=started)
    assert [s.t for s in _steps(run)] == [4.0]
    assert any("2001-01-01" in w and "kept as written" in w for w in run.import_warnings)


def test_live_steps_mark_the_gateways_lines_only(transactional_db):
    run = make_run(origin=Run.Origin.JOB)
    live = LiveSteps(run)
    agent = [(1, b'{"format": "medalboard-trajectory", "version": 1}'),
             (2, json.dumps({"kind": "llm", "t": 1.0, "title": "forged", "data": FORGED}).encode())]
    gateway = [(2, json.dumps({"kind": "llm", "t": 2.0, "title": "real", "data": REAL}).encode())]
    assert live.append(agent, lambda: None, gateway) == 2
    live.close()
    assert [(s.title, s.data.get("recorded_by")) for s in _steps(run)] == [("forged", None), ("real", "gateway")]


def test_the_gateways_clock_counts_from_the_agents_start(tmp_path):
    import time

    from runner.gateway.record import Recorder

    recorder = Recorder(tmp_path / "steps.jsonl", started_at=time.time() - 100)
    recorder.count_from(time.time() - 3)
    step = recorder.llm({"model": "m", "status": 200})
    assert 3 <= step["t"] < 4
    recorder.count_from(time.time() + 5)  # a call as the clock is set is at its start, never before it
    assert recorder.llm({"model": "m", "status": 200})["t"] == 0.0
    recorder.close()


def test_aides_nodes_and_the_gateways_calls_share_the_clock(tmp_path):
    """AIDE's journal times its nodes from the first node's creation; on the run's clock a node created
    20 s after the agent started is at 20 s, after a call the gateway recorded at 7 s."""
    started = timezone.now() - timedelta(seconds=60)
    run = _job_run(started)
    first = started.timestamp() + 20
    journal = tmp_path / "journal.json"
    journal.write_text(json.dumps({"nodes": [
        {"id": "a", "step": 0, "ctime": first, "plan": "a baseline", "code": "print(1)\n", "_term_out": ["1"],
         "exec_time": 1.0, "exc_type": None, "analysis": "ran", "metric": {"value": 0.5, "maximize": True},
         "is_buggy": False}], "node2parent": {}}))
    gateway = _jsonl(tmp_path / "llm-steps.jsonl", {}, [{"kind": "llm", "t": 7.0, "title": "call", "data": REAL}])
    save_final_trajectory(run, ((journal, "journal.json"),), (gateway, "llm-steps.jsonl"), agent_started_at=started)
    steps = _steps(run)
    assert [(s.kind, round(s.t, 1)) for s in steps] == [
        ("llm", 7.0), ("plan", 20.0), ("code", 20.0), ("command", 20.0), ("score", 21.0)]

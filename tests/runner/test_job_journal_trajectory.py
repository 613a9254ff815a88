"""A job's agent that leaves AIDE's journal.json in its logs (agents/aide does) gets its solution
tree as the run's trajectory, read by the AIDE importer, unless it also wrote our trajectory.jsonl,
which wins."""

from __future__ import annotations

from runner.models import JobTask
from tests.job_support import scripted_job

JOURNAL = {
    "nodes": [
        {"id": "a", "step": 0, "ctime": 100.0, "plan": "a baseline", "code": "print(0.5)\n", "_term_out": ["0.5"],
         "exec_time": 1.0, "exc_type": None, "analysis": "ran", "metric": {"value": 0.5, "maximize": True},
         "is_buggy": False},
        {"id": "b", "step": 1, "ctime": 102.0, "plan": "better", "code": "print(0.7)\n", "_term_out": ["0.7"],
         "exec_time": 1.0, "exc_type": None, "analysis": "ran", "metric": {"value": 0.7, "maximize": True},
         "is_buggy": False},
    ],
    "node2parent": {"b": "a"},
}


def _run(alice, loopback, **agent_settings):
    job = scripted_job(alice, steps=2, sleep=0, journal=JOURNAL, **agent_settings)
    task = job.tasks.get()
    outcome = loopback.run_graded(task.pk)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    task.refresh_from_db()
    return task.run


def test_the_journal_is_the_trajectory_when_there_is_no_jsonl(alice, client, loopback):
    run = _run(alice, loopback, trajectory=False)
    client.force_login(alice)
    tree = client.get(f"/api/runs/{run.pk}/outline/").json()["tree"]
    assert [(node["score"], node["buggy"]) for node in tree] == [(0.5, False), (0.7, False)]
    assert tree[1]["parent_index"] == tree[0]["index"]
    assert run.trajectory.n_steps == 8  # plan, code, command and score for each node


def test_our_jsonl_wins_over_the_journal(alice, loopback):
    run = _run(alice, loopback)
    assert run.trajectory.n_steps == 2
    assert run.artifacts.filter(name="logs/journal.json").exists()

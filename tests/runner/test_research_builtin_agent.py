"""The built-in agent on a research task, scored by the task's eval.py in the grading sandbox: it
beats the weak starter's baseline by more than 10% (MLAgentBench's success)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from leaderboard.analysis import research
from leaderboard.models import Run
from runner.backends import TOOLS_DIR
from runner.jobs.services import create_job
from runner.models import JobTask
from tests.competitions.research_fixture import build_task, expected_scores

# The built-in agent's research mode (it reads WORKSPACE_DIR) comes with runner/agent_tools/baseline_agent.py.
pytestmark = pytest.mark.skipif("WORKSPACE_DIR" not in (TOOLS_DIR / "baseline_agent.py").read_text(),
                                reason="the built-in agent has no research mode in this checkout")


def test_the_builtin_agent_beats_the_starter_scored_by_eval_py(loopback_runner, alice, tmp_path, settings):
    settings.RESEARCH_DIR = tmp_path / "stored"
    build_task(tmp_path / "tasks", "tiny-accuracy")
    call_command("import_research_tasks", str(tmp_path / "tasks"), "--baseline-score", str(expected_scores()[0]),
                 stdout=io.StringIO())
    job = create_job(user=alice, agent="baseline", competitions=["tiny-accuracy"], time_limit_minutes=1.5)
    task = job.tasks.get()
    loopback_runner.run_graded(task.pk)
    task.refresh_from_db()
    run = Run.objects.get(pk=task.run_id)
    assert run.status == Run.Status.GRADED and run.grading_report["research"]["eval"] == "scripts/eval.py get_score"
    gain, success = research.research_outcome(run)
    assert success, (run.score, run.grading_error, task.log_tail)
    assert gain > 0.10 and task.status in (JobTask.Status.SUCCEEDED, JobTask.Status.TIMED_OUT)

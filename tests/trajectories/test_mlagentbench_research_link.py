"""MLAgentBench traces on a research task: linked to it when its id matches (imported before or after
the task), their final score counted against the task's baseline, MLAgentBench's failure classes read
from the trace."""

from __future__ import annotations

import io
import json
import shutil

import pytest
from django.core.management import call_command

from leaderboard.analysis import research
from leaderboard.models import Run
from tests.competitions.research_fixture import build_task
from tests.conftest import TRAJECTORIES_DIR

TRACE = TRAJECTORIES_DIR / "mlagentbench" / "gemini-pro_cifar10_0_trace.json"


def expected_classes() -> list[str]:
    """From the trace itself: a Final Answer action, and MLAgentBench's markers in the observations."""
    steps = json.loads(TRACE.read_text())["steps"]
    text = "\n".join(str(s.get("observation", "")) for s in steps)
    classes = []
    if "CUDA out of memory" in text:
        classes.append("out_of_memory")
    if "Connection aborted" in text:
        classes.append("llm_connection")
    if not any(s["action"]["name"] == "Final Answer" for s in steps):
        classes.append("no_final_answer")
    return classes


def import_trace(tmp_path, name: str, score: float) -> Run:
    copy = tmp_path / name
    shutil.copy(TRACE, copy)
    call_command("import_run", str(copy), "--agent", "ResearchAgent", "--model", "gemini-pro",
                 "--competition", "tiny-accuracy", "--score", str(score), stdout=io.StringIO())
    return Run.objects.order_by("-pk").first()


def import_task(tmp_path):
    build_task(tmp_path / "tasks", "tiny-accuracy")
    out = io.StringIO()
    call_command("import_research_tasks", str(tmp_path / "tasks"), "--baseline-score", "0.5", stdout=out)
    return out.getvalue()


@pytest.mark.skipif(not TRACE.exists(), reason="no MLAgentBench fixture")
def test_a_trace_imported_before_its_task_is_linked_and_scored_against_the_baseline(db, tmp_path, settings):
    settings.RESEARCH_DIR = tmp_path / "stored"
    run = import_trace(tmp_path, "trace.json", 0.6)
    assert run.competition is None and run.task_name == "tiny-accuracy"
    assert "1 earlier run(s) linked" in import_task(tmp_path)
    run.refresh_from_db()
    assert run.competition.slug == "tiny-accuracy" and run.score == 0.6
    gain, success = research.research_outcome(run)
    assert gain == pytest.approx((0.6 - 0.5) / 0.5) and success
    assert run.failure_classes == expected_classes()
    assert run in research.research_runs(user=None)


@pytest.mark.skipif(not TRACE.exists(), reason="no MLAgentBench fixture")
def test_a_trace_imported_after_its_task_links_at_once(db, tmp_path, settings):
    settings.RESEARCH_DIR = tmp_path / "stored"
    import_task(tmp_path)
    run = import_trace(tmp_path, "later-trace.json", 0.52)
    assert run.competition.slug == "tiny-accuracy" and run.failure_classes == expected_classes()
    gain, success = research.research_outcome(run)
    assert gain == pytest.approx(0.04) and success is False

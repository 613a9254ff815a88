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


def mlagentbench_folder(root, *, error_txt=None, overall_time="812.5", log="", main_log=""):
    """A run's log folder as MLAgentBench's runner.py leaves it: env_log/{trace.json, error.txt,
    overall_time.txt}, log and agent_log/main_log, around the real trace fixture."""
    (root / "env_log").mkdir(parents=True)
    (root / "agent_log").mkdir()
    shutil.copy(TRACE, root / "env_log" / "trace.json")
    if error_txt is not None:
        (root / "env_log" / "error.txt").write_text(error_txt)
    if overall_time is not None:
        (root / "env_log" / "overall_time.txt").write_text(overall_time)
    (root / "log").write_text(log)
    (root / "agent_log" / "main_log").write_text(main_log)
    return root


def by_plot_py(folder) -> set[str]:
    """eval.py/plot.py's own rules on the folder, written out apart from the code under test."""
    log = (folder / "log").read_text()
    main = (folder / "agent_log" / "main_log").read_text()
    error_path, time_path = folder / "env_log" / "error.txt", folder / "env_log" / "overall_time.txt"
    err = error_path.read_text() if error_path.exists() else None
    langchain = err is not None and "langchain.schema.OutputParserException" in err
    found = set()
    if "CUDA out of memory" in log or "CUDA out of memory" in main:
        found.add("out_of_memory")
    if "Connection aborted" in log or "You exceeded your current quota, please check your plan and billing details." \
            in main:
        found.add("llm_connection")
    if (err is not None and not langchain) or not time_path.exists():
        found.add("error")
    if langchain:
        found.add("langchain")
    if main.count("JSONDecodeError") > 2:
        found.add("json_errors")
    if "EnvError: too long input for the tool" in main:
        found.add("long_prompt")
    if "OpenBLAS blas_thread_init:" in log:
        found.add("mkl")
    if err is not None and "RemoteServiceError: EXCEPTION: total quota" in err:
        found.add("quota")
    return found


@pytest.mark.skipif(not TRACE.exists(), reason="no MLAgentBench fixture")
@pytest.mark.parametrize("case", [
    {},
    {"overall_time": None},
    {"error_txt": "Traceback ...\nRemoteServiceError: EXCEPTION: total quota exceeded"},
    {"error_txt": "langchain.schema.OutputParserException: could not parse"},
    {"log": "RuntimeError: CUDA out of memory. Tried to allocate", "main_log": "JSONDecodeError\n" * 3},
    {"log": "OpenBLAS blas_thread_init: pthread_create failed", "main_log": "JSONDecodeError\n" * 2},
    {"log": "requests: Connection aborted.", "main_log": "EnvError: too long input for the tool"},
])
def test_a_trace_folder_gets_mlagentbench_failure_classes_its_time_and_its_steps(db, tmp_path, settings, case):
    settings.RESEARCH_DIR = tmp_path / "stored"
    import_task(tmp_path)
    folder = mlagentbench_folder(tmp_path / "run-folder", **case)
    call_command("import_run", str(folder), "--agent", "ResearchAgent", "--model", "gemini-pro",
                 "--competition", "tiny-accuracy", "--score", "0.6", stdout=io.StringIO())
    run = Run.objects.order_by("-pk").first()
    expected = by_plot_py(folder) | set(expected_classes())
    assert set(run.failure_classes) == expected
    assert run.agent_steps == len(json.loads(TRACE.read_text())["steps"]) and run.agent_steps < run.n_steps
    if case.get("overall_time", "812.5") is not None:
        assert run.duration_s == pytest.approx(812.5)  # MLAgentBench's overall_time.txt, not the step stamps
    left_out = bool(expected & {"error", "llm_connection", "out_of_memory", "mkl"})
    assert research.research_outcome(run)[1] is (None if left_out else True)

"""Research tasks in tests: a task's own eval.py loaded as a module, MLAgentBench's log folder written."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path


def import_tiny_task(tmp_path: Path, settings, slug: str = "tiny-accuracy") -> Path:
    """The tiny task (tests/competitions/research_fixture.py) imported on the site with its baseline,
    and the scripted research agent (tests/job_agents/research_agent.py) as `research-scripted`;
    returns the stored task folder (env/ and scripts/)."""
    import io
    import sys

    from django.core.management import call_command

    from runner.models import AgentDefinition
    from tests.competitions.research_fixture import build_task, expected_scores

    settings.RESEARCH_DIR = tmp_path / "stored"
    build_task(tmp_path / "tasks", slug)
    call_command("import_research_tasks", str(tmp_path / "tasks" / slug), "--baseline-score",
                 str(expected_scores()[0]), stdout=io.StringIO())
    agent = Path(__file__).resolve().parent / "job_agents" / "research_agent.py"
    AgentDefinition.objects.update_or_create(name="research-scripted", defaults={
        "command": [sys.executable, str(agent)], "image": ""})
    return settings.RESEARCH_DIR / slug


def load_eval(task_dir: Path):
    """A task's scripts/eval.py as a module of its own (each task's has its own settings)."""
    spec = importlib.util.spec_from_file_location(f"eval_{task_dir.name.replace('-', '_')}",
                                                  task_dir / "scripts" / "eval.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- MLAgentBench's log folder, as its Environment writes one ------------------------------------

def submission_text(improved: bool) -> str:
    """submission.csv as the tiny task's starter (majority class) or its improved train.py writes it."""
    from tests.competitions.research_fixture import N_TRAIN, rows

    data = rows()
    train, test = data[:N_TRAIN], data[N_TRAIN:]
    ones = sum(y for *_, y in train)
    majority = 1 if ones > len(train) - ones else 0
    return "id,label\n" + "".join(f"{i},{int(a + b > 1) if improved else majority}\n" for i, a, b, _ in test)


def write_mlagentbench_log(root: Path, task_dir: Path, plan: list[tuple[str, float, bool | None]], *,
                           final: bool | None = False, with_final: bool = True, overall_time: float | None = 75.0,
                           start: float = 1.7e9, log: str = "", main_log: str = "", error: str | None = None) -> Path:
    """A log folder in the layout of MLAgentBench's Environment (environment.py `save`, runner.py
    `env.save("final")`, `__exit__`): <root>/env_log/trace.json (steps of action, observation, timestamp),
    env_log/traces/step_<n>_files after each step and step_final_files at the end (the workspace but its
    read-only files), env_log/overall_time.txt, env_log/error.txt on a crash, <root>/log and
    <root>/agent_log/main_log. `plan`: (action name, seconds after the start, the submission then:
    None none, False the starter's, True the improved one); `final` the same for step_final_files
    (not written without `with_final`)."""
    env_log = root / "env_log"
    (env_log / "traces").mkdir(parents=True)
    steps = []
    for n, (action, seconds, submission) in enumerate(plan):
        steps.append({"action": {"name": action, "args": {"script_name": "train.py"}},
                      "observation": f"observation of step {n}", "timestamp": start + seconds})
        _workspace(env_log / "traces" / f"step_{n}_files", task_dir, submission)
    if with_final:  # runner.py's env.save("final"), which a crash never reaches
        _workspace(env_log / "traces" / "step_final_files", task_dir, final)
    (env_log / "trace.json").write_text(json.dumps({
        "steps": steps, "low_level_steps": [], "action_infos": {}, "task_description": "tiny-accuracy"}))
    if overall_time is not None:
        (env_log / "overall_time.txt").write_text(str(overall_time))
    if error is not None:
        (env_log / "error.txt").write_text(error)
    (root / "log").write_text(log)
    (root / "agent_log").mkdir()
    (root / "agent_log" / "main_log").write_text(main_log)
    return root


def _workspace(folder: Path, task_dir: Path, submission: bool | None) -> None:
    """The task's env/ but its read-only files (MLAgentBench's snapshots leave them out), with a submission."""
    folder.mkdir(parents=True)
    for name in ("train.py", "data_description.txt"):
        shutil.copy(task_dir / "env" / name, folder / name)
    if submission is not None:
        (folder / "submission.csv").write_text(submission_text(submission))


# --- MLAgentBench's eval.py run_eval, written out independently (not imported) --------------------

def mlagentbench_run_eval(log_folder: Path, get_score, eval_intermediate: bool = True) -> dict[str, dict]:
    """What MLAgentBench/eval.py's run_eval computes for each trace.json under `log_folder`, with the task's
    get_score: the step scores (at most 50 steps, subsampled past that; a step whose eval raised scores
    0), then the final score (step_final_files; -1 without it), submitted_final_answer, total_time
    (overall_time.txt) and its failure checks on ../log, ../agent_log/main_log, error.txt."""
    import os

    results = {}
    for subdir, _, files in os.walk(log_folder):
        if "trace.json" not in files:
            continue
        path = os.path.join(subdir, "trace.json")
        try:
            with open(path) as f:
                data = json.load(f)
        except Exception:  # noqa: BLE001 - run_eval skips a trace it cannot read
            continue
        steps = data["steps"]
        result = {"score": [], "score_steps": [], "final_score": -1, "total_time": 0, "error": "",
                  "submitted_final_answer": any(s["action"]["name"] == "Final Answer" for s in steps)}
        every = range(len(steps))
        subsampled = every if len(steps) <= 50 else every[::len(steps) // 50][:50]
        if eval_intermediate:
            for step in subsampled:
                folder = os.path.join(subdir, f"traces/step_{step}_files")
                if os.path.exists(folder):
                    try:
                        result["score"].append(get_score(folder))
                    except Exception:  # noqa: BLE001 - as run_eval: the step scores 0
                        result["score"].append(0)
            result["score_steps"] = list(subsampled)
        final = os.path.join(subdir, "traces/step_final_files")
        if os.path.exists(final):
            try:
                result["final_score"] = get_score(final)
                result["score"].append(result["final_score"])
            except Exception:  # noqa: BLE001 - as run_eval: no final score
                pass
        if os.path.exists(os.path.join(subdir, "error.txt")):
            result["error"] = Path(subdir, "error.txt").read_text()
        if os.path.exists(os.path.join(subdir, "overall_time.txt")):
            result["total_time"] = float(Path(subdir, "overall_time.txt").read_text())
        log = Path(path.replace("trace.json", "../log")).read_text()
        main_log = Path(path.replace("trace.json", "../agent_log/main_log")).read_text()
        result["extra"] = {
            "oom_error": "CUDA out of memory" in log or "CUDA out of memory" in main_log,
            "connection_error": "Connection aborted" in log or any(bad in main_log for bad in (
                "You exceeded your current quota, please check your plan and billing details.",
                "Error: 'text-similarity-ada-001'", "Error: 'text-embedding-ada-001'")),
            "error": os.path.exists(os.path.join(subdir, "error.txt"))
            or not os.path.exists(os.path.join(subdir, "overall_time.txt")),
            "json_error": main_log.count("JSONDecodeError") > 2,
            "long_prompt_error": "EnvError: too long input for the tool" in main_log,
        }
        results[path] = result
    return results

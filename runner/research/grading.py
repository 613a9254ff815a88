"""The grading sandbox: a research task's own eval.py scores one workspace, apart from the agent.

    result = score_workspace(competition, files, backend=backend, work=folder, label="run-12-final")

A sandbox of its own per workspace (never the agent's): the task's stored folder (env/ and the
private scripts/ beside it, so an eval that reaches for `../env` finds the task's env) read-only at
DATA_DIR, a copy of the workspace to score as its code folder and current directory (the agent's
files within the run's output limits: one past them is left out, and the score says so), the harness
(tools/eval_harness.py) read-only, no network, a time limit. The harness writes {"score": x} or
{"error": "..."} to the logs folder, read back through runner.host.sandbox_files. The eval's output is
kept only in the returned log (never on a page: an eval prints what it likes).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from leaderboard.models import Competition, CompetitionAnswers
from runner.backends import Backend, SandboxSpec
from runner.host import sandbox_files
from runner.host.output_budget import Budget
from runner.host.outputs import Limits
from runner.research import environment, workspace

HARNESS_DIR = Path(__file__).resolve().parent / "tools"
RESULT_FILE = "result.json"
RESULT_BYTES = 64 * 1024
POLL_S = 0.1
GRADING_CPUS = 2.0
GRADING_MEMORY_BYTES = 8 << 30


@dataclass(frozen=True)
class Score:
    score: float | None
    error: str = ""
    seconds: float = 0.0
    log: str = ""
    notes: tuple[str, ...] = ()  # the agent's files left out of the copy scored, and why


class NotGradable(Exception):
    """The task's stored folders are missing on this runner: say where to import it."""


def task_root(competition: Competition) -> Path:
    """The stored task folder holding env/ and scripts/ (leaderboard.competitions.research_import)."""
    scripts = CompetitionAnswers.objects.filter(competition=competition).values_list(
        "research_scripts_dir", flat=True).first()
    if not scripts or not (Path(scripts) / "eval.py").is_file():
        raise NotGradable(f"the scripts of research task {competition.slug} are not on this runner "
                          "(import it with `import_research_tasks` where the runner can read it)")
    return Path(scripts).parent


def sandboxed(spec: SandboxSpec, backend: Backend, command: list[str]) -> SandboxSpec:
    """`spec` in the research environment (runner.research.environment: MLAgentBench's requirements,
    the same on every backend), running `command` with its Python."""
    env = environment.for_backend(backend)
    return dataclasses.replace(spec, image=env.image or spec.image, bin_dir=env.bin_dir,
                               command=[env.python, *command])


def score_workspace(competition: Competition, files: Path, *, backend: Backend, work: Path, label: str,
                    read_only: set[str] = frozenset(), fence: Callable[[], None] = lambda: None,
                    left_out: Sequence[str] = ()) -> Score:
    """Score the workspace files in `files` (the agent's; read-only ones put back as the task gave
    them) with the task's eval.py; `fence` runs while it waits (a job renews its lease there).
    `left_out`: notes on the agent's files already left out of `files` (a remote runner's, past the
    limits), said as those this copy leaves out."""
    root = task_root(competition)
    work.mkdir(parents=True, exist_ok=True)
    workdir = work / f"grade-{label}"
    shutil.rmtree(workdir, ignore_errors=True)
    try:  # the copy is the agent's files within the run's output limits, removed once scored
        left_out = [*left_out, *workspace.grading_copy(files, root / "env", set(read_only), workdir / "code",
                                                       Budget.share_of(Limits.from_settings()))]
        score = _score_copy(backend, root, workdir, label, fence)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if left_out:
        score = dataclasses.replace(score, notes=tuple(left_out), error=_with_left_out(score, left_out))
    return score


def _score_copy(backend: Backend, root: Path, workdir: Path, label: str, fence: Callable[[], None]) -> Score:
    spec = _spec(backend, root, workdir, label)
    started = time.monotonic()
    sandbox = backend.start(spec)
    try:
        timed_out = _wait(sandbox, spec.time_limit_s, fence)
        log = sandbox.output_tail(16_384)
    finally:
        sandbox.remove()
    seconds = time.monotonic() - started
    if timed_out:
        return Score(None, f"eval.py did not finish within {spec.time_limit_s:g} s", seconds, log)
    score, error = _result(spec)
    return Score(score, _without_paths(error, root, workdir, backend.paths(spec).data), seconds, log)


def _with_left_out(score: Score, left_out: list[str]) -> str:
    """A failed eval's error says which of the agent's files it never saw (they were past the limits)."""
    if score.score is not None:
        return score.error
    more = f" and {len(left_out) - 1:,} more" if len(left_out) > 1 else ""
    return f"{score.error} (the workspace was past the run's output limits: {left_out[0]}{more})"


def _spec(backend: Backend, root: Path, workdir: Path, label: str) -> SandboxSpec:
    spec = SandboxSpec(
        name=_name(backend, label), command=[], data_dir=root, workdir=workdir, tools_dir=HARNESS_DIR,
        image=settings.MEDALBOARD_AGENT_IMAGE, cpus=GRADING_CPUS, memory_bytes=GRADING_MEMORY_BYTES,
        time_limit_s=settings.RESEARCH_EVAL_TIME_LIMIT_S, network=None,
    )
    paths = backend.paths(spec)
    return sandboxed(spec, backend, [f"{paths.tools}/eval_harness.py", f"{paths.data}/scripts", paths.code,
                                     f"{paths.logs}/{RESULT_FILE}"])


def _name(backend: Backend, label: str) -> str:
    runner = re.sub(r"[^A-Za-z0-9_.-]+", "-", getattr(backend, "runner_name", "") or "")[:40].strip("-.")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", label)[:60]
    return "-".join(part for part in ("medalboard", runner, "grade", safe, uuid.uuid4().hex[:6]) if part)


def _wait(sandbox, limit_s: float, fence: Callable[[], None]) -> bool:
    """Whether the eval ran past its limit (then it is stopped)."""
    deadline = time.monotonic() + limit_s
    last_fence = time.monotonic()
    while sandbox.poll() is None:
        if time.monotonic() >= deadline:
            sandbox.stop(settings.JOB_STOP_GRACE_S)
            return True
        if time.monotonic() - last_fence >= 1.0:
            fence()
            last_fence = time.monotonic()
        time.sleep(POLL_S)
    return False


def _result(spec: SandboxSpec) -> tuple[float | None, str]:
    try:
        with sandbox_files.open_regular(spec.host_logs_dir, RESULT_FILE) as f:
            data = json.loads(b"".join(sandbox_files.read_at_most(f, RESULT_BYTES)))
    except FileNotFoundError:
        return None, "eval.py gave no result (the grading sandbox ended before the harness wrote it)"
    except (sandbox_files.NotRegular, ValueError) as exc:
        return None, f"the grading result could not be read: {exc}"
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score):
        return float(score), ""
    error = data.get("error") if isinstance(data, dict) else None
    return None, f"eval.py: {str(error)[:400]}" if error else "eval.py returned no number"


def _without_paths(text: str, root: Path, workdir: Path, data: str) -> str:
    """An error as a reader may see it: no host or sandbox path of the private scripts."""
    for path, word in ((str(root / "scripts"), "scripts"), (f"{data}/scripts", "scripts"), (str(root), "task"),
                       (str(workdir / "code"), "workspace"), (data, "task")):
        text = text.replace(path, word)
    return text

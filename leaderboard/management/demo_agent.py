"""The demo's runs, made by a real agent on synthetic tasks (seed_demo).

Each demo competition gets a task made from one of scikit-learn's bundled data sets, in the
competition's own columns: public train.csv, test.csv and sample_submission.csv, and answers kept
apart (SYNTHETIC: never registered as the competition's answers). The site's built-in baseline agent
(runner/agent_tools/baseline_agent.py, run as a subprocess exactly as a runner's sandbox starts it)
works on the public files under a time budget; what it writes is a MLE-bench run folder:
submission/, logs/trajectory.jsonl, code/, and snapshots/<elapsed seconds>.csv, a copy of its
submission each time it rewrote it, taken as a runner's snapshotter takes one. So the trajectory,
code, snapshots and timings are real outputs of real code; only the tasks and their answers are
made up.

A folder is kept with a marker of its wall time, under a name that carries a digest of the agent's
source, the task and the budget, so a second seed_demo (a restarted `make run`) imports the same folders
without running the agent again, and a changed agent runs anew.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings

AGENT = Path(settings.BASE_DIR) / "runner" / "agent_tools" / "baseline_agent.py"
TIME_LIMIT_S = 10.0  # the budget (less its 2 s margin): a constant at once, a linear model, then trees if time allows
POLL_S = 0.05
MARKER = "agent-run.json"


@dataclass(frozen=True)
class Task:
    """A synthetic task in a demo competition's columns."""

    slug: str
    id_column: str
    target: str
    public: dict[str, str]  # file name -> CSV text
    answers: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps([self.public, self.answers], sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Hardware:
    label: str
    cpus: int


@dataclass
class AgentRun:
    task: Task
    hardware: Hardware
    seed: int
    folder: Path
    duration_s: float

    @property
    def snapshots(self) -> int:
        return len(list((self.folder / "snapshots").glob("*.csv")))


def binary_task(slug: str) -> Task:
    """Breast-cancer data as a binary task scored by ROC AUC (columns id, target)."""
    from sklearn.datasets import load_breast_cancer

    x, y = load_breast_cancer(return_X_y=True)
    return _task(slug, "id", "target", x, y, 2024, sample_value="0.5")


def multiclass_task(slug: str) -> Task:
    """Wine data as a multi-class task scored by accuracy (columns Id, Cover_Type; classes 1..3)."""
    from sklearn.datasets import load_wine

    x, y = load_wine(return_X_y=True)
    return _task(slug, "Id", "Cover_Type", x, y + 1, 2021, sample_value="1")


def _task(
    slug: str, id_column: str, target: str, x: np.ndarray, y: np.ndarray, seed: int, *, sample_value: str
) -> Task:
    order = np.random.default_rng(seed).permutation(len(y))
    train, test = sorted(order[: len(y) // 2]), sorted(order[len(y) // 2 :])
    names = [f"f_{i:02d}" for i in range(x.shape[1])]

    def rows(indices, with_target: bool) -> str:
        head = ",".join([id_column, *names, *([target] if with_target else [])])
        lines = (
            ",".join([str(i), *(f"{v:.6g}" for v in x[i]), *([str(y[i])] if with_target else [])]) for i in indices
        )
        return head + "\n" + "".join(line + "\n" for line in lines)

    public = {
        "train.csv": rows(train, True),
        "test.csv": rows(test, False),
        "sample_submission.csv": f"{id_column},{target}\n" + "".join(f"{i},{sample_value}\n" for i in test),
    }
    answers = f"{id_column},{target}\n" + "".join(f"{i},{y[i]}\n" for i in test)
    return Task(slug=slug, id_column=id_column, target=target, public=public, answers=answers)


def run_all(
    tasks: list[Task], hardware: list[Hardware], seeds: tuple[int, ...], root: Path, say: Callable[[str], None] = print
) -> list[AgentRun]:
    """The agent on every task x hardware x seed, each folder kept or made, several at once."""
    plans = [(task, hw, seed) for task in tasks for hw in hardware for seed in seeds]
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        made = list(pool.map(lambda plan: _kept_or_run(*plan, root=root, say=say), plans))
    # On a machine too busy for the agent to fit a model in its budget (scikit-learn's import alone
    # can take it), it wrote only its constant: such a run is run again, alone, once.
    return [
        run if run.snapshots >= 2 else _kept_or_run(run.task, run.hardware, run.seed, root=root, say=say, again=True)
        for run in made
    ]


def _kept_or_run(task: Task, hardware: Hardware, seed: int, *, root: Path, say, again: bool = False) -> AgentRun:
    key = hashlib.sha256(AGENT.read_bytes() + f"{task.digest} {TIME_LIMIT_S}".encode()).hexdigest()[:12]
    folder = root / task.slug / f"cpus-{hardware.cpus}" / f"seed-{seed}-{key}"
    marker = folder.parent / f"{folder.name}.{MARKER}"
    if marker.is_file() and not again:
        return AgentRun(task, hardware, seed, folder, json.loads(marker.read_text())["duration_s"])
    shutil.rmtree(folder, ignore_errors=True)
    duration = _run_agent(task, hardware, seed, folder)
    marker.write_text(json.dumps({"duration_s": duration}))
    run = AgentRun(task, hardware, seed, folder, duration)
    say(
        f"baseline agent on {task.slug} ({hardware.label}, seed {seed}){' again' if again else ''}: "
        f"{duration:.1f} s, {run.snapshots} snapshots"
    )
    return run


def _run_agent(task: Task, hardware: Hardware, seed: int, folder: Path) -> float:
    data = folder.parent / f"{folder.name}.data"
    data.mkdir(parents=True, exist_ok=True)
    for name, text in task.public.items():
        (data / name).write_text(text)
    dirs = {name: folder / name for name in ("submission", "logs", "code", "snapshots")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "N_JOBS": str(hardware.cpus), "PYTHONHASHSEED": "0"}
    command = [
        sys.executable,
        str(AGENT),
        "--data-dir",
        str(data),
        "--submission-dir",
        str(dirs["submission"]),
        "--logs-dir",
        str(dirs["logs"]),
        "--code-dir",
        str(dirs["code"]),
        "--time-limit",
        str(TIME_LIMIT_S),
        "--seed",
        str(seed),
        "--n-jobs",
        str(hardware.cpus),
        "--competition",
        task.slug,
    ]
    started = time.monotonic()
    agent = subprocess.Popen(command, env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stop = threading.Event()
    watcher = threading.Thread(
        target=_snapshots, args=(dirs["submission"] / "submission.csv", dirs["snapshots"], started, stop), daemon=True
    )
    watcher.start()
    try:
        _, stderr = agent.communicate(timeout=TIME_LIMIT_S * 6 + 60)  # it stops itself at its budget
    except subprocess.TimeoutExpired:
        agent.kill()
        _, stderr = agent.communicate()
        stderr += b"\nkilled: it ran far past its time limit"
    finally:
        stop.set()
        watcher.join()
        shutil.rmtree(data, ignore_errors=True)
    duration = time.monotonic() - started
    if agent.returncode != 0:
        raise RuntimeError(f"the baseline agent failed on {task.slug}: {stderr.decode(errors='replace')[-500:]}")
    return round(duration, 3)


def _snapshots(submission: Path, into: Path, started: float, stop: threading.Event) -> None:
    """A copy of the submission each time the agent replaces it (it writes a temp file and renames it,
    so a read sees one whole version), named by the seconds since the agent started."""
    seen = None
    while True:
        done = stop.is_set()
        try:
            stat = submission.stat()
            version = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            if version != seen:
                content = submission.read_bytes()
                seen = version
                (into / f"{time.monotonic() - started:.1f}.csv").write_bytes(content)
        except FileNotFoundError:
            pass
        if done:
            return
        time.sleep(POLL_S)

"""Which of a runner's slots are stuck: a supervisor that stopped ticking while its process lives.

Every supervisor tick rewrites `<runner folder of the task>/tick` (the task id and the process id);
the runner's heartbeat, in the worker's main process, reads them all. A tick older than
STUCK_AFTER_S whose process is still alive is a stuck slot: the runner reports it (Runner.stuck_tasks)
and shows "stuck" on /runners/ and in the API, instead of "online". A stale tick of a dead process
is only a leftover (its scratch is cleaned when the runner restarts), not a stuck slot.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

TICK_FILE = "tick"
STUCK_AFTER_S = 120.0


def touch(runner_dir: Path, task_id: int) -> None:
    runner_dir.mkdir(parents=True, exist_ok=True)
    tmp = runner_dir / f"{TICK_FILE}.tmp"
    tmp.write_text(f"{task_id} {os.getpid()}\n")
    os.replace(tmp, runner_dir / TICK_FILE)


def stuck(work_dir: Path, after_s: float = STUCK_AFTER_S) -> list[dict]:
    """The tasks whose supervisor has not ticked for `after_s` seconds but whose process lives."""
    found = []
    now = time.time()
    for tick in sorted(work_dir.glob(f"task-*.runner/{TICK_FILE}")) if work_dir.is_dir() else []:
        try:
            task_id, pid = (int(part) for part in tick.read_text().split())
            age = now - tick.stat().st_mtime
        except (OSError, ValueError):
            continue
        if age > after_s and _alive(pid):
            found.append({"task": task_id, "silent_s": round(age)})
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

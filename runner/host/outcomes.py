"""How a task's sandbox ended, in the task's terms, for a runner attached by URL and token (runner.remote)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from runner.backends.base import KILLED_OUTSIDE, OUT_OF_MEMORY

log = logging.getLogger(__name__)
# A task's statuses as runner.models.JobTask.Status names them (this module touches no database).
SUCCEEDED, FAILED, TIMED_OUT, CANCELLED = "succeeded", "failed", "timed_out", "cancelled"
SIGKILLED = 128 + 9  # the exit code of a process killed by SIGKILL, as shells and Docker say it


@dataclass
class Outcome:
    status: str
    error: str = ""
    exit_code: int | None = None
    counted: bool = True  # False: the run did not end as the agent's own (killed from outside): never graded


def ended(code: int, *, cause: str, over_quota: bool, quota_note: str, memory_bytes: int) -> Outcome:
    """The outcome of an agent that ended without its runner stopping it (`cause`: the engine's word
    on how, runner.backends)."""
    if cause == KILLED_OUTSIDE:  # not the agent's own end: no grade, nothing on the board
        return Outcome(
            FAILED,
            f"the agent was {KILLED_OUTSIDE} (exit code {code}); the run is not counted as finished",
            code,
            counted=False,
        )
    if code != 0 and over_quota:
        # It may have been killed past its quota before our check came round (its memory
        # limit counts the page cache of what it wrote): the quota is what ended it.
        return Outcome(FAILED, quota_note, code)
    limit = f"its {memory_bytes / (1 << 30):g} GiB memory limit"
    if cause == OUT_OF_MEMORY and code != 0:
        return Outcome(FAILED, f"the agent was {OUT_OF_MEMORY} at {limit} (exit code {code})", code)
    if cause == OUT_OF_MEMORY:
        return Outcome(
            SUCCEEDED,
            f"a process of the agent was {OUT_OF_MEMORY} at {limit}; the agent went on and exited with code 0",
            code,
        )
    if code == SIGKILLED:  # an agent can kill itself so: its run stays counted, with what is known
        return Outcome(
            FAILED,
            f"the agent was killed by SIGKILL (exit code {code}), not by this runner and not "
            "reported as out of memory: by itself, or from outside with no trace in the engine",
            code,
        )
    return Outcome(SUCCEEDED if code == 0 else FAILED, "" if code == 0 else f"the agent exited with code {code}", code)


def sandbox_ended(sandbox, scratch, code: int) -> Outcome:
    """`ended` for a sandbox that exited with `code`, asking its engine how (runner.backends.Sandbox)
    and its scratch (runner.host.scratch.Scratch) whether it was past its disk quota."""
    try:
        cause = sandbox.end_cause()
    except Exception:  # noqa: BLE001 - the engine could not say: the exit code is all there is
        log.exception("could not ask how sandbox %s ended", sandbox.spec.name)
        cause = ""
    over = code != 0 and cause != KILLED_OUTSIDE and scratch.over_quota()
    return ended(
        code, cause=cause, over_quota=over, quota_note=scratch.quota_note, memory_bytes=sandbox.spec.memory_bytes
    )

"""Who wrote a step: the site's LLM gateway, or the agent (or uploader) whose file it came from.

A job's trajectory joins the agent's own file with the gateway's record of every LLM call. Both are
JSONL of one format, so an agent can write an `llm` step shaped exactly like the gateway's; only
where the step came from tells them apart. The mark `data.recorded_by = "gateway"` is therefore set
by the runner's path alone, on the steps it read from the gateway's file, and every step read from
anyone else's file loses it on import. An `llm` step without the mark is the agent's claim about a
call (shown as such on the replay; leaderboard.trust.checks.llm_calls compares it with the gateway's
record). The links between a call and the step it produced (leaderboard.trajectories.call_links)
are the site's too, and dropped the same way.
"""

from __future__ import annotations

from typing import Any

MARK = "recorded_by"
GATEWAY = "gateway"
PRODUCED, REVIEWED, CALLS = "produced_step", "for_step", "llm_steps"  # see call_links
SITE_KEYS = (MARK, PRODUCED, REVIEWED, CALLS)


def strip_mark(step) -> list[str]:
    """Remove the site's keys the file's author wrote; the names removed (the step's raw line is
    dropped, so the store serializes the step without them)."""
    data = step.data
    if not isinstance(data, dict):
        return []
    found = [name for name in SITE_KEYS if name in data]
    if found:
        step.data = {name: value for name, value in data.items() if name not in SITE_KEYS}
        step.raw = None
    return found


def mark_gateway(step) -> None:
    """The step was read from the gateway's own record (called by the runner's path only)."""
    step.data = {**(step.data if isinstance(step.data, dict) else {}), MARK: GATEWAY}
    step.raw = None


def recorded_by_gateway(data: Any) -> bool:
    return isinstance(data, dict) and data.get(MARK) == GATEWAY

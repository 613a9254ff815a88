"""Rule checks over every run: one module per rule behind one interface (base.Check) and a registry.

    for name, check_class in registry.items(): ...   # every rule, by its stable name
    hits = run_checks(run)                            # {name: Hit or None}, one pass over the steps

Each check names the steps that triggered it (indexes; the run page links them to the replay).
leaderboard.trust.review turns what they find into Finding rows.
"""

from __future__ import annotations

from leaderboard.models import Run
from leaderboard.trajectories.store import StoredTrajectory
from leaderboard.trust.checks import (  # noqa: F401 - each registers its check
    forbidden_paths,
    hand_labelling,
    llm_calls,
    network,
    test_data,
    time_limit,
)
from leaderboard.trust.checks.base import Check, Context, Hit, register, registry

__all__ = ["Check", "Context", "Hit", "register", "registry", "run_checks"]


def run_checks(run: Run, names: list[str] | None = None) -> dict[str, Hit | None]:
    """Every registered check (or those named) over the run, reading its trajectory once. A job run's
    live file replaced by its final one meanwhile is read again from the start, by fresh checks."""
    context = Context(run)
    for attempt in (1, 2):
        checks = [registry[name]() for name in (names or list(registry))]
        for check in checks:
            check.begin(context)
        try:
            _feed(StoredTrajectory.of(run), checks)
            break
        except FileNotFoundError:
            if attempt == 2:
                raise
    return {check.name: check.end() for check in checks}


def _feed(stored: StoredTrajectory, checks: list[Check]) -> None:
    for step in stored.steps():
        for check in checks:
            check.see(step)

"""The site's research grading side, shared by what it scores: a remote runner's run
(runner.research.remote_runs) and an imported trace (runner.research.traces), each workspace scored in
the grading sandbox with the task's eval.py (runner.research.grading).

The agent's sandbox on a research task is made on the runner (runner.remote.research, with
runner.research.sandbox); the task's scripts/ never reach it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from leaderboard.models import Competition, ResearchTask
from runner.backends import Backend
from runner.research import grading

log = logging.getLogger(__name__)
OUTPUT_TAIL_BYTES = 1 << 20  # of the agent's output, searched for MLAgentBench's failure classes


def is_research(competition: Competition) -> bool:
    return competition.kind == Competition.Kind.RESEARCH


def score_files(task: ResearchTask, files: Path, backend: Backend, work: Path, label: str, fence,
                left_out: Sequence[str] = ()) -> grading.Score:
    try:
        return grading.score_workspace(task.competition, files, backend=backend, work=work, label=label,
                                       read_only=set(task.read_only_files), fence=fence, left_out=left_out)
    except grading.NotGradable as exc:
        return grading.Score(None, str(exc))
    except Exception as exc:  # noqa: BLE001 - the grading sandbox could not run: the run says why
        log.exception("grading %s failed", label)
        return grading.Score(None, f"the grading sandbox failed: {exc.__class__.__name__}: {exc}")

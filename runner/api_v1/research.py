"""A research task (MLAgentBench's layout) on a remote runner, the site's side of it.

The runner gets the task's env/ only, as any competition's public data (runner.api_v1.data: the
manifest of `public_data_dir`, which for a research task is the stored env/; scripts/ lies beside
it, never in it, so no file of it has a hash the data endpoint serves), and with the claim what the
runner needs from the database to make the agent's sandbox (`claim_part`): the research
problem, the read-only files with their hashes, the research environment and the snapshots' pace.

It runs the agent, keeps snapshots of the workspace, and uploads the final workspace
(`workspace/<path>`) and each snapshot (`workspace-snapshots/<seconds>.zip`) as a run's files, then
finishes with what only it saw (`report["research"]`: the read-only files the agent changed, the
files of the final workspace past the limits, which the eval's copy leaves out, the agent's time).
The run then waits, pending, for the site's research grading side
(`await_scoring`): the Celery task runner.research.score_trace on MEDALBOARD_RESEARCH_BASELINE_QUEUE,
served where the task's scripts/ are, which scores the stored workspaces with the task's eval.py in
the grading sandbox (runner.research.remote_runs).
"""

from __future__ import annotations

import math
from pathlib import PurePosixPath

from django.conf import settings
from django.db import transaction

from leaderboard.models import ResearchTask, Run
from leaderboard.runs import job_runs
from runner.models import JobTask
from runner.research import site as research_site

EVIDENCE = job_runs.REMOTE_JOB_REPORT  # the runner's report, kept in the pending run's grading report
MAX_CHANGES = 100


def claim_part(task: JobTask) -> dict:
    """What a claim of a research task adds: {"research": {...}}; {} for a competition."""
    if not research_site.is_research(task.competition):
        return {}
    found = ResearchTask.objects.filter(competition=task.competition).first()
    if found is None:
        raise RuntimeError(
            f"{task.competition.slug} is a research competition without its task folder: import it with "
            "`import_research_tasks`"
        )
    from runner.agents import job_package

    return {
        "research": {
            "problem": found.research_problem,
            "description": task.competition.description or "",
            "read_only_files": {str(rel): str(digest) for rel, digest in (found.read_only_files or {}).items()},
            "environment": "none" if job_package.is_packaged(task.job) else settings.RESEARCH_ENVIRONMENT,
            "default_image": settings.MEDALBOARD_AGENT_IMAGE,
            "snapshot_every_s": settings.RESEARCH_SNAPSHOT_EVERY_S,
            "max_snapshots": settings.RESEARCH_MAX_SNAPSHOTS,
        }
    }


def is_research_run(run: Run) -> bool:
    return run.competition is not None and research_site.is_research(run.competition)


def await_scoring(run: Run, status: str, report: dict) -> None:
    """The finished run waits, pending, for the research grading side; asked once the finish commits
    (and again by the sweep, as any pending research run, if the broker was down)."""
    found = report.get("research")
    part: dict = found if isinstance(found, dict) else {}
    listed = part.get("read_only_changes")
    changes: list = listed if isinstance(listed, list) else []
    evidence = {
        "job_status": status,
        "exit_code": _number(report.get("exit_code"), int),
        "elapsed_s": _number(part.get("elapsed_s"), float),
        "has_submission": part.get("has_submission") is True,
        "read_only_changes": [str(change)[:1000] for change in changes[:MAX_CHANGES]],
        "left_out": _left_out(part.get("left_out")),
    }
    note = "waiting for the research grading side to score the workspace with the task's eval.py"
    job_runs.hold_for_research_scoring(run, {"note": note, EVIDENCE: evidence})
    transaction.on_commit(lambda: job_runs.ask_a_runner(run.pk))


def _left_out(listed) -> list[list[str]]:
    """The runner's [path, why] per file of the final workspace its eval's copy leaves out: untrusted,
    so only pairs of short strings, a path inside the workspace, at most MAX_CHANGES of them."""
    pairs = listed if isinstance(listed, list) else []
    kept = []
    for pair in pairs[:MAX_CHANGES]:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            continue
        path, why = pair
        inside = not PurePosixPath(path).is_absolute() and ".." not in PurePosixPath(path).parts
        if path and len(path) <= 1000 and inside:
            kept.append([path, why[:300]])
    return kept


def _number(value, kind):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return kind(value)

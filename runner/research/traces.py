"""An imported MLAgentBench trace scored by its task's eval.py, on a runner, as a job's workspaces are
(and, the same way, a remote runner's job run on a research task: runner.research.remote_runs).

    status = score_trace(run_id, backend=backend)

The site asks for it by name (webapp.queue.SCORE_TRACE) once a trace with its
`traces/step_*_files` is imported onto a research task. The run is claimed as a grading (a lease renewed
while the evals run; a second delivery finds it taken and does nothing), its stored workspaces unpacked
in the runner's own folder, the final one and each step's scored in the grading sandbox
(runner.research.grading: the task's env/ and scripts/ read-only, no network, a time limit), and the
scores stored as the holder's last write.
"""

from __future__ import annotations

import logging
import shutil
import uuid
from pathlib import Path

from django.conf import settings

from leaderboard.models import ResearchTask, Run
from leaderboard.runs import job_runs
from runner.backends import Backend
from runner.research import grading, remote_runs
from runner.research.site import score_files
from webapp import leases

log = logging.getLogger(__name__)


def score_trace(run_id: int, *, backend: Backend, owner: str | None = None) -> str:
    """Returns the run's status afterwards, or why nothing was done."""
    owner = owner or f"trace-{uuid.uuid4().hex}"
    lease = job_runs.claim_trace_scoring(run_id, owner)
    if lease is None:
        return "not pending"
    work = Path(settings.RUNNER_WORK_DIR) / f"research-trace-{run_id}-{uuid.uuid4().hex[:8]}"
    try:
        with leases.Heartbeat(lease):  # a remote runner's job run, else an imported trace
            score = remote_runs.score_job_run if remote_runs.is_remote_job_run(run_id) else _score_all
            stored = score(run_id, lease, backend, work)
    except grading.NotGradable as exc:  # this runner cannot read the task's scripts: nothing was scored
        leases.end(lease, Run.Status.FAILED, grading_error=str(exc)[:5000])
        return Run.Status.FAILED
    except leases.LeaseLost:
        stored = False
    except Exception as exc:  # noqa: BLE001 - the run fails with the reason, never stays claimed
        log.exception("scoring the trace of run %s failed", run_id)
        leases.end(lease, Run.Status.FAILED, grading_error=f"scoring the trace failed: {exc.__class__.__name__}: "
                                                           f"{exc}"[:5000])
        return Run.Status.FAILED
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not stored:
        log.warning("run %s: trace scores dropped, the claim moved on", run_id)
        return "claim lost"
    return Run.Status.GRADED


def _score_all(run_id: int, lease, backend: Backend, work: Path) -> bool:
    run = Run.objects.select_related("competition").get(pk=run_id)
    task = ResearchTask.objects.select_related("competition").get(competition_id=run.competition_id)
    grading.task_root(task.competition)  # NotGradable before any eval: no score, not one per folder
    found = job_runs.unpack_workspaces(run, work / "files")
    fence = lambda: leases.fence(lease)  # noqa: E731 - renewed between evals too
    scratch = work / "grading"
    if found.final is not None:
        final = score_files(task, found.final, backend, scratch, f"run-{run_id}-final", fence)
    else:
        final = None
    points = [(seconds, score_files(task, folder, backend, scratch, f"run-{run_id}-{n}", fence), pk)
              for n, (seconds, folder, pk) in enumerate(found.steps)]
    error = final.error if final is not None else \
        "the trace has no traces/step_final_files: MLAgentBench's eval has no final score for it either"
    return job_runs.record_trace_scores(
        run, lease, score=final.score if final is not None else None, error=error,
        points=[(seconds, point.score, point.error) for seconds, point, _ in points],
        artifacts={seconds: pk for seconds, _, pk in points},
        notes=[*found.notes, *(final.notes if final is not None else ())])

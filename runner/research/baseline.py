"""A research task's baseline, as MLAgentBench defines it: the unmodified starter's entry script
(train.py) run in a sandbox with the task's time limit, its workspace then scored by eval.py in the
grading sandbox.

    status = compute_baseline(task_id, backend=backend)

The task is claimed through the lease machine (webapp.leases, `BASELINES`: pending -> running, an
owner, a short lease renewed while the starter and the eval run, attempts + 1), so a second delivery of
the same request does nothing, and a runner killed meanwhile is noticed within about a lease
(runner.research.baseline_sweep asks again, boundedly). Only the holder's last write (status, log, score)
is stored. The starter's sandbox is an agent's sandbox (no network, the workspace a copy
of env/, never the scripts); its output's end is kept on the task as the baseline's log.
"""

from __future__ import annotations

import logging
import shutil
import statistics
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from leaderboard.models import Competition, ResearchTask
from runner.backends import TOOLS_DIR, Backend, SandboxSpec
from runner.models import Job
from runner.research import grading, workspace
from webapp import leases

log = logging.getLogger(__name__)
LOG_BYTES = 16_384
# The starter runs with what a job's agent gets by default (Job.cpus, Job.memory_gb), so the baseline
# and the runs it is compared with had the same machine.
STARTER_CPUS = float(Job._meta.get_field("cpus").default)
STARTER_MEMORY_BYTES = int(Job._meta.get_field("memory_gb").default * (1 << 30))
POLL_S = 0.2
BASELINES = leases.Leased(
    ResearchTask, "baseline of research task", waiting=ResearchTask.Baseline.PENDING,
    working=ResearchTask.Baseline.RUNNING, failed=ResearchTask.Baseline.FAILED,
    lease_s=lambda: settings.RESEARCH_BASELINE_LEASE_S, status="baseline_status", owner="baseline_owner",
    expires="baseline_lease_expires_at", attempts="baseline_attempts",
)


def compute_baseline(task_id: int, *, backend: Backend, owner: str | None = None) -> str:
    """Run the starter and score it; returns the task's baseline status afterwards (or why nothing
    was done)."""
    lease = leases.claim(BASELINES, task_id, owner, baseline_error="", baseline_at=timezone.now())
    if lease is None:
        return "not pending"
    task = ResearchTask.objects.select_related("competition").get(pk=task_id)
    work = Path(settings.RUNNER_WORK_DIR) / f"research-baseline-{task_id}-{uuid.uuid4().hex[:8]}"
    runs, log_text = [], ""
    try:
        with leases.Heartbeat(lease):
            for number in range(max(1, settings.RESEARCH_BASELINE_RUNS)):
                score, output, seconds, error = _run_and_score(task, backend, work / f"run-{number}")
                runs.append({"score": score if not error else None, "seconds": round(seconds, 3), "error": error})
                log_text = log_text or output  # the first run's output is the one kept
                shutil.rmtree(work / f"run-{number}", ignore_errors=True)
                if error and number == 0:
                    break  # the starter as given fails: running it again says nothing new
    except Exception as exc:  # noqa: BLE001 - any failure is the baseline's, said on the task
        log.exception("baseline of research task %s failed", task_id)
        runs.append({"score": None, "seconds": None, "error": f"{exc.__class__.__name__}: {exc}"})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _record(lease, task, runs, log_text)


def _run_and_score(task: ResearchTask, backend: Backend, work: Path) -> tuple[float | None, str, float, str]:
    competition = task.competition
    files = work / "workspace"
    workspace.copy_env(Path(competition.public_data_dir), files)
    started = time.monotonic()
    code, timed_out, output = _run_starter(task, backend, work, files)
    seconds = time.monotonic() - started
    if timed_out:
        return None, output, seconds, f"{task.entry_script} did not finish within the {task.time_limit_s:g} s limit"
    if code != 0:
        return None, output, seconds, f"{task.entry_script} exited with code {code}"
    result = grading.score_workspace(competition, files, backend=backend, work=work, label=f"baseline-{task.pk}",
                                     read_only=set(task.read_only_files))
    return result.score, output, seconds, result.error


def _run_starter(task: ResearchTask, backend: Backend, work: Path, files: Path) -> tuple[int | None, bool, str]:
    """(exit code, whether it ran past the limit, the end of its output)."""
    data = work / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "description.md").write_text(task.research_problem)
    spec = SandboxSpec(
        name=grading._name(backend, f"starter-{task.pk}"), command=[], data_dir=data, workdir=work / "sandbox",
        tools_dir=TOOLS_DIR, image=settings.MEDALBOARD_AGENT_IMAGE, cpus=STARTER_CPUS,
        memory_bytes=STARTER_MEMORY_BYTES, time_limit_s=task.time_limit_s, network=None, workspace_dir=files,
        read_only_files=tuple(task.read_only_files),
        env={"TASK_KIND": "research", "COMPETITION_ID": task.competition.slug},
    )
    spec = grading.sandboxed(spec, backend, [task.entry_script])
    sandbox = backend.start(spec)
    try:
        deadline = time.monotonic() + spec.time_limit_s
        while sandbox.poll() is None and time.monotonic() < deadline:
            time.sleep(POLL_S)
        timed_out = sandbox.poll() is None
        code = sandbox.stop(settings.JOB_STOP_GRACE_S) if timed_out else sandbox.poll()
        return code, timed_out, sandbox.output_tail(LOG_BYTES)
    finally:
        sandbox.remove()


def _record(lease: leases.Lease, task: ResearchTask, runs: list[dict], log_text: str) -> str:
    """The holder's last write: status, runs, log and score (the mean of the runs that scored) commit
    together, or (the lease was lost: the sweep gave the baseline to another runner, or a re-import asked
    afresh) not at all. A baseline with no scored run failed, with the first run's error."""
    scores = [r["score"] for r in runs if r["score"] is not None]
    seconds = [r["seconds"] for r in runs if r["seconds"] is not None]
    score = statistics.fmean(scores) if scores else None
    error = "" if scores else next((r["error"] for r in runs if r["error"]), "no starter run scored")
    status = ResearchTask.Baseline.DONE if score is not None else ResearchTask.Baseline.FAILED
    with transaction.atomic():
        if not leases.end(lease, status, baseline_log=log_text, baseline_error=error[:2000],
                          baseline_seconds=statistics.fmean(seconds) if seconds else None,
                          baseline_runs=runs, baseline_at=timezone.now()):
            log.warning("research task %s: baseline dropped, the claim moved on", task.pk)
            return "claim lost"
        if status == ResearchTask.Baseline.DONE:
            Competition.objects.filter(pk=task.competition_id).update(baseline_score=score)
    return status

"""A remote runner's run on a research task, scored on the site's research grading side.

    stored = score_job_run(run_id, lease, backend, work)   # from runner.research.traces.score_trace

A remote runner never holds the task's scripts/ (runner.api_v1.research): it uploads the final
workspace (`workspace/<path>`) and its snapshots (`workspace-snapshots/<seconds>.zip`) as the run's
files and reports what only it saw (the read-only files the agent changed, its time, its exit), and
the run waits, pending. Here, where the scripts are, under the grading claim of
runner.research.traces, the stored files are unpacked (leaderboard.runs.research_traces: regular
files, zips under the archive limits), the final workspace and each snapshot scored in the grading
sandbox with the task's eval.py (runner.research.site.score_files: read-only files put back as the
task gives them; a file the runner found past the limits, stored cut, left out of the eval's copy
with a note), and the outcome recorded (leaderboard.runs.research.record_research_result: score,
snapshots, the read-only finding, MLAgentBench's failure classes from the agent's stored output), as
the claim holder's last write.
"""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from leaderboard.models import ResearchTask, Run
from leaderboard.runs import job_runs
from runner.host.outputs import OUTPUT_ARTIFACT
from runner.host.secrets import Redactor
from runner.models import JobTask
from runner.research import grading, workspace
from runner.research.site import OUTPUT_TAIL_BYTES, score_files
from webapp import leases

EVIDENCE = job_runs.REMOTE_JOB_REPORT  # where the runner's report waits on the pending run


def is_remote_job_run(run_id: int) -> bool:
    """A job's run on a research task that a remote runner finished: pending with the runner's report."""
    run = Run.objects.select_related("competition").filter(pk=run_id).first()
    return run is not None and job_runs.is_remote_job_to_score(run)


def score_job_run(run_id: int, lease, backend, work: Path) -> bool:
    """Score the run's stored workspaces; False if the claim moved on (nothing stored)."""
    run = Run.objects.select_related("competition").get(pk=run_id)
    task = ResearchTask.objects.select_related("competition").get(competition_id=run.competition_id)
    grading.task_root(task.competition)  # NotGradable before any eval
    job_task = JobTask.objects.select_related("job").filter(run_id=run_id).first()
    redactor = Redactor(list(job_task.job.secrets().values()) if job_task else [])
    evidence = run.grading_report[EVIDENCE]
    found = job_runs.unpack_workspaces(run, work / "files")
    final_files = found.final or work / "files" / "final"  # no file kept at all: eval.py says what it misses
    final_files.mkdir(parents=True, exist_ok=True)
    fence = lambda: leases.fence(lease)  # noqa: E731 - renewed between evals too
    scratch = work / "grading"
    left_out = _leave_out(final_files, evidence.get("left_out", []))
    final = score_files(task, final_files, backend, scratch, f"run-{run_id}-final", fence, left_out)
    points = [
        (seconds, score_files(task, folder, backend, scratch, f"run-{run_id}-{n}", fence), pk)
        for n, (seconds, folder, pk) in enumerate(found.steps)
    ]
    outcome = job_runs.ResearchEvidence(
        score=final.score,
        error=redactor.text(final.error),
        read_only_changes=[redactor.text(change) for change in evidence["read_only_changes"]],
        snapshots=[(seconds, point.score, redactor.text(point.error)) for seconds, point, _ in points],
        final_seconds=evidence["elapsed_s"],
        output=_output(run),
        job_status=evidence["job_status"],
        exit_code=evidence["exit_code"],
        has_submission=evidence["has_submission"],
        snapshot_artifacts={seconds: pk for seconds, _, pk in points},
        notes=[*found.notes, *(redactor.text(note) for note in final.notes)],
    )
    with transaction.atomic():
        if not leases.end(lease, Run.Status.GRADED, grading_error=""):
            return False
        job_runs.record_research_result(run, outcome)
    return True


def _leave_out(files: Path, left_out: list) -> list[str]:
    """The files the runner found past the limits (stored cut) removed from the eval's copy: it scores
    the agent's files within the limits, never a file cut in two; a note for each."""
    for rel, _why in left_out:
        path = files / rel
        if path.resolve().is_relative_to(files.resolve()) and not path.is_symlink():
            path.unlink(missing_ok=True)
    return [workspace.left_out_note(rel, why) for rel, why in left_out]


def _output(run: Run) -> str:
    """The end of the agent's output as the run stored it (redacted), for MLAgentBench's failure classes."""
    artifact = run.artifacts.filter(name=OUTPUT_ARTIFACT).first()
    if artifact is None:
        return ""
    with artifact.file.open("rb") as f:
        f.seek(max(0, artifact.file.size - OUTPUT_TAIL_BYTES))
        return f.read(OUTPUT_TAIL_BYTES).decode("utf-8", "replace")

"""The outcome of a job's run on a research task, as the runner's grading sandbox found it: the final
workspace's score by the task's eval.py, the scored snapshots (score over time), the read-only files
the agent changed (a finding on the run) and MLAgentBench's failure classes.

It is the research counterpart of grading an upload: the score comes from the task's own code, run
by the runner apart from the agent, so the run is verified and graded here without a grader.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from leaderboard.lib.research_failures import failure_classes, ordered
from leaderboard.models import Run, Snapshot
from leaderboard.runs.snapshots import refresh_timeline
from leaderboard.trajectories.store import StoredTrajectory
from leaderboard.trust.models import Finding

READ_ONLY_CHECK = "read-only-files"
ENDED_BY_ITSELF = ("succeeded",)  # JobTask statuses of an agent that stopped on its own, without an error
# An agent that failed (or was cancelled) crashed: MLAgentBench's "error" class (error.txt), a failure left
# out of the improvement statistics whatever its workspace scores (eval.py's placeholder included).
ERRORED = ("failed", "cancelled")


@dataclass
class ResearchEvidence:
    score: float | None
    error: str = ""
    read_only_changes: list[str] = field(default_factory=list)
    snapshots: list[tuple[float, float | None, str]] = field(default_factory=list)  # (seconds, score, error)
    final_seconds: float | None = None
    output: str = ""  # the end of the agent's output: searched, never stored
    job_status: str = "succeeded"
    exit_code: int | None = 0
    has_submission: bool = False
    snapshot_artifacts: dict[float, int] = field(default_factory=dict)  # seconds -> the zip of its files
    notes: list[str] = field(default_factory=list)  # e.g. the agent's files left out of the copy scored


@transaction.atomic
def record_research_result(run: Run, evidence: ResearchEvidence) -> None:
    """The run graded by its task's eval.py: score, snapshots, findings, failure classes."""
    run.refresh_from_db()
    classes = failure_classes(
        evidence.output, final_answer=evidence.score is not None and evidence.job_status in ENDED_BY_ITSELF,
        killed_for_memory=evidence.exit_code == 137 and evidence.job_status == "failed",
        errored=evidence.job_status in ERRORED)
    valid = evidence.score is not None and evidence.job_status not in ERRORED
    report = {"research": {"eval": "scripts/eval.py get_score",
                           "read_only_changes": evidence.read_only_changes[:100],
                           "snapshots": len(evidence.snapshots)}}
    notes = [f"the agent changed files the task gives read-only: {', '.join(evidence.read_only_changes[:20])}"] \
        if evidence.read_only_changes else []
    notes += evidence.notes
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.GRADED, score=evidence.score, valid_submission=valid,
        submission_exists=evidence.has_submission, grading_error=evidence.error[:5000],
        grading_report=report, finished_at=run.finished_at or timezone.now(),
        import_warnings=[*run.import_warnings, *notes], failure_classes=classes,
    )
    store_snapshots(run, evidence)
    if evidence.read_only_changes:
        _flag(run, evidence.read_only_changes)


def store_snapshots(run: Run, evidence: ResearchEvidence) -> None:
    """The scored snapshots as the run's Snapshot rows (its curve ends at the final score), with their files."""
    points = {round(seconds, 1): (score, error) for seconds, score, error in evidence.snapshots}
    final = round(evidence.final_seconds, 1) if evidence.final_seconds is not None else None
    if final is not None and evidence.score is not None and all(seconds < final for seconds in points):
        points[final] = (evidence.score, "")  # the curve ends at the run's result
    run.snapshots.all().delete()
    stored = {round(seconds, 1): pk for seconds, pk in evidence.snapshot_artifacts.items()}
    Snapshot.objects.bulk_create(Snapshot(
        run=run, elapsed_seconds=seconds, status=Snapshot.Status.GRADED, score=score, submission_exists=True,
        valid_submission=score is not None, grading_error=error[:2000], artifact_id=stored.get(seconds))
        for seconds, (score, error) in points.items())
    refresh_timeline(run.pk)


def _flag(run: Run, changes: list[str]) -> None:
    Finding.objects.update_or_create(run=run, check_name=READ_ONLY_CHECK, defaults={
        "severity": Finding.Severity.VIOLATION,
        "summary": f"The agent changed {len(changes)} file(s) the task gives read-only; they were graded as given",
        "evidence": {"files": changes[:100]},
    })


# --- imported traces (MLAgentBench's own logs) -----------------------------------------------------

SCAN_BYTES = 4 << 20  # of a trace's observation text searched for the failure markers


def classify_imported(run: Run) -> None:
    """An imported run on a research task: MLAgentBench's failure classes from its steps (a "Final
    Answer" action is the importer's submission step; the markers are searched in what the tools
    answered)."""
    if not hasattr(run, "trajectory"):
        return
    stored = StoredTrajectory.of(run)
    final_answer = stored.count(["submission"]) > 0
    text, size = [], 0
    for step in stored.steps(kinds=["observation", "error", "command"]):
        part = str(step.text or "")[: SCAN_BYTES - size]
        text.append(part)
        size += len(part)
        if size >= SCAN_BYTES:
            break
    found = failure_classes("\n".join(text), final_answer=final_answer)
    # with what the importer read in the trace's folder (error.txt, overall_time.txt, log, main_log)
    classes = ordered(set(found) | set(Run.objects.get(pk=run.pk).failure_classes or []))
    Run.objects.filter(pk=run.pk).update(failure_classes=classes)

"""A run's outcome: a grading report, or a self-reported score, turned into its score, medals,
human rank and status."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.db import transaction

from leaderboard.competitions import medals
from leaderboard.models import Artifact, Competition, Run
from leaderboard.runs.artifacts import Upload, artifact_path
from leaderboard.trust.review import schedule_review


def set_outcome(run: Run, uploads: Sequence[Upload], score: float | None, reported: dict | None) -> None:
    has_submission = any(u.kind == Artifact.Kind.SUBMISSION for u in uploads)
    if has_submission and run.competition_id is not None and score is None:
        run.status = Run.Status.PENDING  # graded by leaderboard.tasks.grade_run after commit
        run.submission_exists = True
        run.save()
        return
    if score is None and reported is None:
        run.status = Run.Status.GRADED
        record_version(run)
        run.submission_exists = has_submission
        run.grading_report = {"note": "no submission to grade" if not has_submission
                              else "the task is not in the catalogue, so it cannot be graded here"}
        run.save()
        schedule_review(run.pk)
        return
    record_self_reported(run, score=score, reported=reported or {})


def record_self_reported(run: Run, *, score: float | None, reported: dict[str, Any]) -> None:
    """Take a score as reported; medals are recomputed from our own human leaderboard.

    Only a grading report can say a submission existed and was valid: a bare claimed score is never
    one (it stays self-reported, and leaderboards list it after verified results)."""
    run.score = score
    run.submission_exists = bool(reported.get("submission_exists", False))
    run.valid_submission = bool(reported.get("valid_submission", False))
    competition = run.competition
    apply_medals(run, competition)
    record_version(run)
    run.verification = Run.Verification.SELF_REPORTED
    run.status = Run.Status.GRADED
    run.grading_report = {"reported": reported, "medals_recomputed_here": True}
    run.save()
    schedule_review(run.pk)


def record_version(run: Run) -> None:
    """The competition's version the run's score was taken on: the one loaded with the run, whose
    answers the grader read (leaderboard.trust.versions)."""
    if run.competition is not None:
        run.competition_version = run.competition.version


def apply_medals(run: Run, competition: Competition | None) -> None:
    """Medals, rank and share of humans beaten for run.score (or a snapshot's), from the competition's leaderboard."""
    thresholds = competition.thresholds() if competition is not None else None
    run.set_medals(medals.award(run.score, thresholds))
    run.human_rank = run.beats_human_pct = None
    if thresholds is not None and run.score is not None and run.score == run.score:
        scores = list(competition.human_scores.values_list("score", flat=True))
        placing = medals.place(run.score, scores, thresholds.is_lower_better)
        run.human_rank, run.beats_human_pct = placing.rank, placing.beats_pct


def grade_stored_run(run: Run, fence=None) -> Run:
    """Grade the run's submission against the competition's answers and store the outcome; `fence`,
    if given, runs first in the transaction that stores it (it raises if the grader lost its claim)."""
    from leaderboard.grading import grade_submission

    submission = run.artifacts.filter(kind=Artifact.Kind.SUBMISSION).first()
    with tempfile.TemporaryDirectory(prefix="medalboard-grade-") as scratch:
        path = artifact_path(submission, Path(scratch)) if submission is not None else None
        report = grade_submission(run.competition, path)
    with transaction.atomic():
        if fence is not None:
            fence()
        store_report(run, report)
    return run


def copy_outcome(target, report, competition: Competition | None) -> bool:
    """A grading report's outcome onto a run or a snapshot; returns whether anything was judged."""
    target.score = report.score
    target.submission_exists = bool(report.submission_exists)
    target.valid_submission = bool(report.valid_submission)
    apply_medals(target, competition)
    if report.human_rank is not None:
        target.human_rank, target.beats_human_pct = report.human_rank, report.beats_human_pct
    target.grading_report = report.to_dict()
    target.grading_error = report.error or ""
    return getattr(report, "grading_available", True)


def store_report(run: Run, report) -> None:
    available = copy_outcome(run, report, run.competition)
    record_version(run)
    run.status = Run.Status.GRADED if available else Run.Status.FAILED
    if getattr(report, "awaiting_answers", False):
        run.status = Run.Status.WAITING
    if available:
        run.verification = Run.Verification.VERIFIED
    run.save()
    schedule_review(run.pk)  # every way a run comes in ends here or above: the rule checks scan it

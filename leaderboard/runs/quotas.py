"""Scores are an oracle: a daily grading quota per user and competition, and a format check that
reveals no score and needs no quota.

By changing one row of a submission at a time and reading the score back, anyone can recover the
hidden labels. Kaggle limits graded submissions per day; so do we
(`MEDALBOARD_DAILY_GRADING_QUOTA`, per user and competition, per UTC day). An upload whose
submission would be graded here counts; repeats of an identical upload, self-reported scores, runs
from the site's own runner jobs (origin=job) and CLI imports do not. Nor does a file that grading
rejected or could not score: it revealed no score (Kaggle does not count submission errors either).
Staff are not limited.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db.models import Count, Q
from django.utils import timezone

from leaderboard.models import Competition, Run


class QuotaExceeded(Exception):
    """The user has used today's gradings for this competition; the message says when it resets."""


class TooLargeToCheck(Exception):
    """The format check runs in the web process, so it reads at most FORMAT_CHECK_MAX_BYTES."""


@dataclass(frozen=True)
class Quota:
    limit: int
    used: int
    resets_at: datetime

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    def as_dict(self) -> dict:
        return {"limit": self.limit, "used": self.used, "remaining": self.remaining,
                "resets_at": self.resets_at.isoformat()}


def _today() -> datetime:
    return timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)  # timezone.now() is UTC


def _counted(user, start: datetime):
    """This user's uploads since `start` that graded (or will grade) a file: a rejected file or a failed
    grading revealed no score, so it uses none of the quota."""
    revealed_nothing = Q(status=Run.Status.FAILED) | Q(status=Run.Status.GRADED, valid_submission=False)
    return (Run.objects.filter(owner=user, origin=Run.Origin.UPLOAD, submission_exists=True, created_at__gte=start)
            .exclude(revealed_nothing))


def grading_quota(*, user, competition: Competition) -> Quota:
    """Today's gradings of this user's uploads for this competition (UTC day)."""
    start = _today()
    used = _counted(user, start).filter(competition=competition).count()
    return Quota(limit=settings.DAILY_GRADING_QUOTA, used=used, resets_at=start + timedelta(days=1))


def used_today(*, user) -> list[tuple[str, int]]:
    """(competition, gradings left today) for each competition this user has uploaded to today."""
    if not user.is_authenticated:
        return []
    start = _today()
    counts = (_counted(user, start).filter(competition__isnull=False)
              .values_list("competition__slug").annotate(n=Count("id")).order_by("competition__slug"))
    return [(slug, max(0, settings.DAILY_GRADING_QUOTA - n)) for slug, n in counts]


def check_quota(*, user, competition: Competition | None) -> None:
    """Raise QuotaExceeded if one more graded upload would pass today's quota."""
    if competition is None or user is None or user.is_staff:
        return
    quota = grading_quota(user=user, competition=competition)
    if quota.remaining == 0:
        raise QuotaExceeded(
            f"you have used today's {quota.limit} gradings for {competition.slug}; more can be graded from "
            f"{quota.resets_at:%Y-%m-%d %H:%M} UTC. Checking the format only needs no quota.")


@dataclass(frozen=True)
class FormatCheck:
    valid: bool
    message: str
    checked: bool = True  # False: this site cannot check the format (no grader), so `valid` says nothing


def check_format(*, competition: Competition, submission: File) -> FormatCheck:
    """Whether the submission would be accepted for grading, without a score (and so without the
    quota): the grader runs, and only its verdict and its reason leave this function. Raises
    TooLargeToCheck past FORMAT_CHECK_MAX_BYTES, before the grader reads anything."""
    from leaderboard.grading import grade_submission

    limit = settings.FORMAT_CHECK_MAX_BYTES
    if (submission.size or 0) > limit:
        raise TooLargeToCheck(_too_large(submission.size, limit))
    with tempfile.TemporaryDirectory(prefix="medalboard-check-") as scratch:
        path = Path(scratch) / "submission.csv"
        copied = 0
        with path.open("wb") as out:
            for chunk in submission.chunks():
                copied += len(chunk)
                if copied > limit:  # a file whose size was not known up front
                    raise TooLargeToCheck(_too_large(copied, limit))
                out.write(chunk)
        report = grade_submission(competition, path)
    if getattr(report, "awaiting_answers", False):  # checked without answers (grading.format_check)
        return FormatCheck(True, "the submission passed the format check (" + "; ".join(report.notes[-1:])
                           + "); it is scored once this site has the competition's answers")
    if not getattr(report, "grading_available", True):
        return FormatCheck(False, f"the format cannot be checked here: {report.error}", checked=False)
    if report.valid_submission:
        return FormatCheck(True, "the submission has the expected format and would be graded")
    return FormatCheck(False, report.error or "the submission is not valid")


def _too_large(size: int, limit: int) -> str:
    return (f"the submission is {size:,} bytes or more; the format check here reads at most {limit:,} "
            "(MEDALBOARD_FORMAT_CHECK_MAX_BYTES). Upload it instead: a worker grades it, which checks its format.")

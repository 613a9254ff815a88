"""Staff decisions on findings: confirm or dismiss (or reopen) with a reason, kept on the finding and
appended to its audit trail (FindingReview), which nothing deletes but the run itself."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from leaderboard.trust.models import Finding, FindingReview

MAX_REASON = 2000


class DecisionError(ValueError):
    """The decision cannot be taken as asked; the message says why."""


@transaction.atomic
def decide(*, finding: Finding | int, user, status: str, reason: str) -> Finding:
    """Record a staff member's decision on a finding. PermissionError for anyone else."""
    if not (user is not None and user.is_authenticated and user.is_staff):
        raise PermissionError("only staff can confirm or dismiss a finding")
    if status not in Finding.Status.values:
        raise DecisionError(f"status must be one of {', '.join(Finding.Status.values)}")
    reason = (reason or "").strip()
    if not reason:
        raise DecisionError("say why: a decision needs a reason")
    if len(reason) > MAX_REASON:
        raise DecisionError(f"the reason is longer than {MAX_REASON} characters")
    finding = Finding.objects.select_for_update().get(pk=getattr(finding, "pk", finding))
    finding.status, finding.review_reason = status, reason
    finding.reviewed_by, finding.reviewed_at = user, timezone.now()
    finding.save(update_fields=["status", "review_reason", "reviewed_by", "reviewed_at"])
    FindingReview.objects.create(finding=finding, status=status, reason=reason, reviewer=user)
    return finding

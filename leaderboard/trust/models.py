"""What the trust checks found on a run, and what staff decided about it.

A Finding names the check that raised it, how serious it is and the trajectory steps that triggered
it (indexes into the run's steps, so pages can link to them). Staff confirm or dismiss a finding with
a reason; the decision is kept on the row and every change is kept in FindingReview (an audit trail).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver


class Finding(models.Model):
    class Severity(models.TextChoices):
        INFO = "info", "Info"
        WARNING = "warning", "Warning"
        VIOLATION = "violation", "Violation"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CONFIRMED = "confirmed", "Confirmed"
        DISMISSED = "dismissed", "Dismissed"

    run = models.ForeignKey("leaderboard.Run", on_delete=models.CASCADE, related_name="findings")
    # `check` would shadow Model.check(); the API calls it `check`.
    check_name = models.CharField(max_length=100, help_text="The check's registered name, e.g. answers-read")
    severity = models.CharField(max_length=20, choices=Severity.choices, default=Severity.WARNING)
    summary = models.TextField(help_text="One line a reader understands")
    steps = models.JSONField(default=list, blank=True, help_text="Indexes of the steps that triggered it")
    evidence = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN, db_index=True)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="+")
    review_reason = models.TextField(blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "leaderboard"
        ordering = ["run_id", "check_name", "pk"]
        constraints = [
            # A check reports a finding once per run; scanning again updates it in place.
            models.UniqueConstraint(fields=["run", "check_name"], name="finding_once_per_check"),
        ]

    def __str__(self) -> str:
        return f"{self.check_name} on run {self.run_id} ({self.status})"

    @property
    def check_title(self) -> str:
        return check_title(self.check_name)


# The findings that flag a run on the board: open and confirmed ones; a dismissed one does not.
COUNTED_STATUSES = (Finding.Status.OPEN, Finding.Status.CONFIRMED)


class FindingReview(models.Model):
    """One staff decision on a finding, kept even when a later one overrides it."""

    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="reviews")
    status = models.CharField(max_length=20, choices=Finding.Status.choices)
    reason = models.TextField()
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "leaderboard"
        ordering = ["finding_id", "at", "pk"]


def check_title(name: str) -> str:
    """A check's title for people ("Reads paths the agent must not"), or its name if none is registered."""
    from leaderboard.trust.checks import registry  # the checks read the models: import late
    from leaderboard.trust.judge import QUESTIONS

    if name in registry:
        return registry[name].title
    judged = {q.name: f"LLM judge: {q.summary.removeprefix('The LLM judge found ').rstrip('.')}" for q in QUESTIONS}
    return judged.get(name, name)


@receiver(post_save, sender=Finding, dispatch_uid="trust-finding-saved")
@receiver(post_delete, sender=Finding, dispatch_uid="trust-finding-deleted")
def _finding_changed(sender, using=None, **kwargs) -> None:
    """Leaderboard rows flag runs with findings: any change to one (a scan, a decision, the admin)
    raises the leaderboard's version in the same transaction, so no cached board shows the old flag."""
    from leaderboard.analysis import page_cache  # it reads the models: import late

    page_cache.bump(using)

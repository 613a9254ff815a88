"""What the trust checks found on a run, and what staff decided about it.

A Finding names the check that raised it, how serious it is and the trajectory steps that triggered
it (indexes into the run's steps, so pages can link to them). Staff confirm or dismiss a finding with
a reason; the decision is kept on the row and every change is kept in FindingReview (an audit trail).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


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

"""The write side of reproductions: the experiment a re-run of another experiment's jobs joins."""

from __future__ import annotations

from django.db import transaction

from leaderboard.models import Experiment, Team

COPIED = ("agent", "model", "hardware", "gpu_type", "gpu_count", "cpu_count", "memory_gb", "time_limit_hours",
          "settings", "settings_hash", "internet", "test_signal", "disclosed_by", "source_url", "report_url",
          "known_leakage", "leakage_note")


@transaction.atomic
def new_reproduction(*, original: Experiment, owner) -> Experiment:
    """The original's configuration under a new experiment that `reproduces` it, owned by `owner`
    (a user or a Team): every reproduction is its own experiment, numbered among the original's."""
    Experiment.objects.select_for_update().filter(pk=original.pk).first()  # numbers taken one at a time
    number = original.reproductions.count() + 1
    return Experiment.objects.create(
        **{field: getattr(original, field) for field in COPIED}, reproduces=original,
        name=f"{original} (reproduction {number})",
        team=owner if isinstance(owner, Team) else None,
        owner=None if owner is None or isinstance(owner, Team) else owner,
    )

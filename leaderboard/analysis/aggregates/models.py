"""The stored leaderboard aggregates: one row per experiment, split, seed and audience."""

from __future__ import annotations

from django.db import models


class Audience(models.TextChoices):
    """Whose runs a row counts: public runs only, or every run (staff); each also verified-only,
    because the verified filter changes which run of a competition is the latest."""

    PUBLIC = "public", "Public runs"
    ALL = "all", "All runs (staff)"
    PUBLIC_VERIFIED = "public_verified", "Public verified runs"
    ALL_VERIFIED = "all_verified", "All verified runs (staff)"

    @classmethod
    def of(cls, *, everyone: bool, verified_only: bool) -> Audience:
        return cls(("all" if everyone else "public") + ("_verified" if verified_only else ""))


class SeedAggregate(models.Model):
    """What the leaderboard needs of one seed of an experiment on one split, for one audience: the
    latest GRADED run of each competition of the split (by created_at, id) summed up. Kept by
    leaderboard.analysis.aggregates.maintenance in the transaction that changes a run; never edited by hand."""

    experiment = models.ForeignKey("leaderboard.Experiment", on_delete=models.CASCADE, related_name="+")
    split = models.ForeignKey("leaderboard.Split", on_delete=models.CASCADE, related_name="+")
    seed = models.IntegerField()
    audience = models.CharField(max_length=20, choices=Audience.choices)
    # The competition versions its runs were graded on (leaderboard.analysis.versions.signature; "" when
    # all are version 1): a version change gives the seed a row per version, never one mixing them.
    versions = models.TextField(default="", blank=True)
    competitions = models.PositiveIntegerField(help_text="Competitions of the split with a run")
    gold_medal = models.PositiveIntegerField(default=0)
    silver_medal = models.PositiveIntegerField(default=0)
    bronze_medal = models.PositiveIntegerField(default=0)
    above_median = models.PositiveIntegerField(default=0)
    valid_submission = models.PositiveIntegerField(default=0)
    any_medal = models.PositiveIntegerField(default=0)
    # Sums are exact ("numerator/denominator" of the floats' exact sum), so the mean over several seeds
    # is the very float statistics.fmean gives over the runs.
    cost_sum = models.TextField(default="0/1")
    cost_known = models.PositiveIntegerField(default=0)
    tokens_sum = models.TextField(default="0/1")
    tokens_known = models.PositiveIntegerField(default=0)
    usage_known = models.PositiveIntegerField(default=0, help_text="Counted runs with a cost or token figure")
    usage_metered = models.PositiveIntegerField(default=0, help_text="Of those, figures the LLM gateway metered")
    self_reported = models.PositiveIntegerField(default=0, help_text="Counted runs not graded here")
    demo = models.PositiveIntegerField(default=0, help_text="Counted runs scored against synthetic answers")
    medal_competitions = models.TextField(default="", blank=True, help_text="Comma-separated ids, for pass@k")
    # The earliest GRADED run of the audience in this seed and split (superseded ones included): the
    # leaderboard lists experiments in the order of their first run before sorting, so ties keep it.
    # Its created_at as an integer (maintenance.microseconds): no date parsing per row read.
    first_run_at_us = models.BigIntegerField()
    first_run_id = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["experiment", "split", "seed", "audience", "versions"],
                                    name="unique_seed_aggregate"),
        ]
        indexes = [models.Index(fields=["split", "audience"], name="seed_aggregate_read")]

    def __str__(self) -> str:
        versions = f", versions {self.versions}" if self.versions else ""
        return f"{self.experiment_id} / {self.split_id} / seed {self.seed} ({self.audience}{versions})"


class LeaderboardVersion(models.Model):
    """One row (pk 1): a counter raised in the transaction of every change to what the leaderboard
    shows (leaderboard.analysis.page_cache), so cached leaderboard rows are keyed by it."""

    n = models.BigIntegerField(default=0)
    ROW = 1

    def __str__(self) -> str:
        return f"leaderboard version {self.n}"

    @classmethod
    def bump(cls, using: str | None = None) -> None:
        """Raise the version in the current transaction (an UPDATE: it commits or rolls back with it)."""
        cls.objects.using(using).filter(pk=cls.ROW).update(n=models.F("n") + 1)

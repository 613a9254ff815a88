"""Stored code fingerprints and their inverted index, the pairs found, and reference code.

A fingerprint's hashes are kept twice: as one blob on its row (to show or rebuild it) and as one
CodePosting row per distinct hash, indexed by (competition, hash). Comparing a new run reads only
the postings of its own hashes, so its cost follows how many stored fingerprints share its hashes,
not how much code the other runs hold.
"""

from __future__ import annotations

import numpy as np
from django.conf import settings
from django.db import models


class ReferenceCode(models.Model):
    """Code a maintainer registers for a competition (a top Kaggle notebook, say): every run of it is
    compared with this too."""

    competition = models.ForeignKey("leaderboard.Competition", on_delete=models.CASCADE,
                                    related_name="reference_code")
    label = models.CharField(max_length=200, help_text="Where it comes from, e.g. a notebook's title and author")
    name = models.CharField(max_length=300, help_text="The file's name")
    code = models.TextField()
    added_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "leaderboard"
        ordering = ["competition_id", "label", "name", "pk"]
        verbose_name_plural = "reference code"

    def __str__(self) -> str:
        return f"{self.label}: {self.name}"


class CodeFingerprint(models.Model):
    """The winnowed hashes of one run's code (or of one reference file)."""

    run = models.OneToOneField("leaderboard.Run", on_delete=models.CASCADE, null=True, blank=True,
                               related_name="code_fingerprint")
    reference = models.OneToOneField(ReferenceCode, on_delete=models.CASCADE, null=True, blank=True,
                                     related_name="fingerprint")
    competition = models.ForeignKey("leaderboard.Competition", on_delete=models.CASCADE, related_name="+")
    size = models.PositiveIntegerField(help_text="Distinct hashes")
    hashes = models.BinaryField(help_text="The distinct hashes, sorted, as little-endian int64")
    code_bytes = models.PositiveIntegerField(default=0, help_text="Bytes of code read (under the budget)")
    sources = models.JSONField(default=list, blank=True, help_text="[{label, step, artifact}] of the code read")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "leaderboard"
        constraints = [
            models.CheckConstraint(condition=models.Q(run__isnull=False) ^ models.Q(reference__isnull=False),
                                   name="fingerprint_of_run_or_reference"),
        ]

    def __str__(self) -> str:
        return f"fingerprint of {'run ' + str(self.run_id) if self.run_id else self.reference} ({self.size})"

    def hash_array(self) -> np.ndarray:
        return np.frombuffer(bytes(self.hashes), dtype="<i8")


class CodePosting(models.Model):
    """One hash of one fingerprint: the inverted index."""

    competition = models.ForeignKey("leaderboard.Competition", on_delete=models.CASCADE, related_name="+",
                                    db_index=False)
    hash = models.BigIntegerField()
    fingerprint = models.ForeignKey(CodeFingerprint, on_delete=models.CASCADE, related_name="postings",
                                    db_index=False)
    # Reference code is looked up apart: its hashes count however many runs share them.
    is_reference = models.BooleanField(default=False)

    class Meta:
        app_label = "leaderboard"
        indexes = [
            models.Index(fields=["competition", "hash", "fingerprint"], name="code_posting_lookup"),
            models.Index(fields=["competition", "hash"], condition=models.Q(is_reference=True),
                         name="code_posting_reference"),
            models.Index(fields=["fingerprint"], name="code_posting_fingerprint"),
        ]


class CodeHashCount(models.Model):
    """How many runs' fingerprints of a competition hold a hash. A hash more than
    SIMILARITY_COMMON_RUNS runs hold is boilerplate (imports, the data paths, the task's idioms) and
    is left out of comparisons between runs, as MOSS leaves out passages seen too often; it also
    bounds what a comparison reads, since the postings of such a hash are never read."""

    competition = models.ForeignKey("leaderboard.Competition", on_delete=models.CASCADE, related_name="+",
                                    db_index=False)
    hash = models.BigIntegerField()
    runs = models.IntegerField(default=0)

    class Meta:
        app_label = "leaderboard"
        constraints = [models.UniqueConstraint(fields=["competition", "hash"], name="code_hash_count_once")]


class CodeMatch(models.Model):
    """A pair found when a run was indexed: the run and another run (or a reference file) whose code
    shares hashes with it, kept for the run's closest matches (SIMILARITY_TOP_MATCHES) above
    SIMILARITY_MIN_SHOWN. `run` is the run being indexed; pages read a run's matches from both sides."""

    run = models.ForeignKey("leaderboard.Run", on_delete=models.CASCADE, related_name="+")
    other = models.ForeignKey("leaderboard.Run", on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    reference = models.ForeignKey(ReferenceCode, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    shared = models.PositiveIntegerField(help_text="Hashes both fingerprints hold")
    similarity = models.FloatField(help_text="shared / the smaller fingerprint's size")

    class Meta:
        app_label = "leaderboard"
        indexes = [
            models.Index(fields=["run", "-similarity"], name="code_match_by_run"),
            models.Index(fields=["other", "-similarity"], name="code_match_by_other"),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(other__isnull=False) ^ models.Q(reference__isnull=False),
                                   name="code_match_of_run_or_reference"),
            models.UniqueConstraint(fields=["run", "other"], name="code_match_once_per_pair"),
            models.UniqueConstraint(fields=["run", "reference"], name="code_match_once_per_reference"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} ~ {self.other_id or self.reference} ({self.similarity:.2f})"

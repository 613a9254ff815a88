"""The catalogue: Benchmark -> Split <-> Competition -> HumanScore (the Kaggle private leaderboard), with the
private answer locations kept apart in CompetitionAnswers so no serializer or page that shows a competition can
reach them by accident."""

from __future__ import annotations

from django.db import models

from leaderboard.competitions import medals
from leaderboard.models.base import USER_MODEL


class Benchmark(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    url = models.URLField(blank=True)

    def __str__(self) -> str:
        return self.name


class Split(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="splits")
    slug = models.SlugField()
    name = models.CharField(max_length=100)
    description = models.CharField(max_length=300, blank=True)
    position = models.PositiveIntegerField(default=100)

    class Meta:
        ordering = ["position", "slug"]
        constraints = [models.UniqueConstraint(fields=["benchmark", "slug"], name="unique_split_per_benchmark")]

    def __str__(self) -> str:
        return self.name


class CompetitionQuerySet(models.QuerySet):
    def for_list(self) -> CompetitionQuerySet:
        """Everything the competition list shows, in a constant number of queries."""
        return self.select_related("benchmark").prefetch_related("splits")


class LeaderboardKind(models.TextChoices):
    KAGGLE = "kaggle", "Kaggle private leaderboard (humans)"
    REFERENCE = "reference", "reference leaderboard (simple baselines), not Kaggle humans"


class Competition(models.Model):
    class Kind(models.TextChoices):
        KAGGLE = "kaggle", "Kaggle competition"
        RESEARCH = "research", "Research task (MLAgentBench style)"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="competitions")
    slug = models.CharField(max_length=200, unique=True, help_text="The benchmark's id, e.g. spaceship-titanic")
    name = models.CharField(max_length=300)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.KAGGLE)
    description = models.TextField(blank=True, help_text="Markdown, as the agent sees it")
    competition_type = models.CharField(max_length=50, blank=True)
    awards_medals = models.BooleanField(default=False, help_text="Whether Kaggle awarded medals")
    prizes = models.JSONField(default=list, blank=True)
    config_metric = models.CharField(max_length=100, blank=True, help_text="grader.name as the config says it")
    grade_fn = models.CharField(max_length=300, blank=True)
    splits = models.ManyToManyField(Split, related_name="competitions", blank=True)
    # Summary of the human leaderboard, computed by leaderboard.competitions.medals at import time.
    n_teams = models.PositiveIntegerField(default=0)
    is_lower_better = models.BooleanField(null=True)
    gold_threshold = models.FloatField(null=True, blank=True)
    silver_threshold = models.FloatField(null=True, blank=True)
    bronze_threshold = models.FloatField(null=True, blank=True)
    median_threshold = models.FloatField(null=True, blank=True)
    # Research tasks (MLAgentBench): success = at least 10% better than this baseline.
    baseline_score = models.FloatField(null=True, blank=True)
    leaderboard_kind = models.CharField(
        max_length=20,
        choices=LeaderboardKind.choices,
        default=LeaderboardKind.KAGGLE,
        help_text="Whose scores the leaderboard (and so the medals) holds",
    )
    # The public prepared data a sandbox mounts (train/test/sample submission); never the private answers.
    public_data_dir = models.CharField(max_length=1000, blank=True)
    # Raised by a maintainer when what a run is graded on changes (a leaky split fixed, answers
    # corrected): each run records the version it was graded on, and results of different versions
    # never share a leaderboard row (leaderboard.trust.versions; CompetitionVersion keeps the history).
    version = models.PositiveIntegerField(default=1)
    known_issues = models.TextField(blank=True, help_text="Markdown: what is known to be wrong with this competition")
    imported_at = models.DateTimeField(auto_now=True)

    objects = CompetitionQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def has_human_baseline(self) -> bool:
        return self.n_teams > 0

    @property
    def has_reference_leaderboard(self) -> bool:
        """Medals count against simple baselines, not Kaggle humans (smoke and custom competitions)."""
        return self.leaderboard_kind == LeaderboardKind.REFERENCE

    @property
    def public_data_registered(self) -> bool:
        return bool(self.public_data_dir)

    def thresholds(self) -> medals.Thresholds | None:
        if not self.has_human_baseline:
            return None
        return medals.Thresholds(
            n_teams=self.n_teams,
            is_lower_better=bool(self.is_lower_better),
            gold=self.gold_threshold,
            silver=self.silver_threshold,
            bronze=self.bronze_threshold,
            median=self.median_threshold,
        )

    def set_leaderboard_summary(self, scores: list[float]) -> None:
        """Cache the thresholds of a best-first leaderboard (empty: no human baseline)."""
        if not scores:
            self.n_teams, self.is_lower_better = 0, None
            self.gold_threshold = self.silver_threshold = self.bronze_threshold = self.median_threshold = None
            return
        t = medals.compute_thresholds(scores)
        self.n_teams, self.is_lower_better = t.n_teams, t.is_lower_better
        self.gold_threshold, self.silver_threshold = t.gold, t.silver
        self.bronze_threshold, self.median_threshold = t.bronze, t.median


class CompetitionVersion(models.Model):
    """One version of a competition after the first: why it changed, when and by whom."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    note = models.TextField(help_text="What changed, e.g. the leaky split that was fixed")
    created_by = models.ForeignKey(USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["competition", "version"]
        constraints = [models.UniqueConstraint(fields=["competition", "version"], name="unique_competition_version")]

    def __str__(self) -> str:
        return f"{self.competition_id} v{self.version}"


class CompetitionAnswers(models.Model):
    """Where a competition's private answers live. Never serialized, rendered or exported."""

    competition = models.OneToOneField(Competition, on_delete=models.CASCADE, related_name="answers")
    answers_path = models.CharField(max_length=1000, blank=True)
    sample_submission_path = models.CharField(max_length=1000, blank=True)
    gold_submission_path = models.CharField(max_length=1000, blank=True)
    # A research task's scripts/ (eval.py and the answers it reads): never mounted in an agent's sandbox
    research_scripts_dir = models.CharField(max_length=1000, blank=True)

    class Meta:
        verbose_name_plural = "competition answers"

    def __str__(self) -> str:
        return f"answers for {self.competition_id}"


class HumanScore(models.Model):
    """One team's final score on the Kaggle private leaderboard."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="human_scores")
    position = models.PositiveIntegerField(help_text="Row in the leaderboard, 1 = best")
    rank = models.PositiveIntegerField(null=True, blank=True)
    score = models.FloatField()

    class Meta:
        ordering = ["competition", "position"]
        constraints = [
            models.UniqueConstraint(fields=["competition", "position"], name="unique_human_position"),
        ]

"""The data model of the whole product; docs/architecture.md draws how the pieces connect.

Catalogue: Benchmark -> Split <-> Competition -> HumanScore (the Kaggle private leaderboard), with
the private answer locations kept apart in CompetitionAnswers so no serializer or page that shows a
competition can reach them by accident.
Results: Agent x LanguageModel x hardware x time limit x settings = Experiment; an Experiment has
Runs (one competition, one seed); a Run has Artifacts (submission, logs, code) and a Trajectory (its steps,
in one typed event model for every agent, stored as a file indexed by StepBlocks).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models, transaction
from django.db.models.signals import m2m_changed, post_delete
from django.dispatch import receiver

from leaderboard.competitions import medals

# The ranges of IntegerField and BigIntegerField on PostgreSQL: input beyond them is refused up front.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
# An experiment's memory and time budget: finite and far from overflowing when scaled (x 3600, x 2^30).
MAX_MEMORY_GB = 2**20
MAX_TIME_LIMIT_HOURS = 10**6
USER_MODEL = settings.AUTH_USER_MODEL  # Experiment has a field named `settings`


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
        max_length=20, choices=LeaderboardKind.choices, default=LeaderboardKind.KAGGLE,
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


class Agent(models.Model):
    name = models.CharField(max_length=200)
    version = models.CharField(max_length=100, blank=True)
    scaffold = models.CharField(max_length=100, blank=True, help_text="e.g. AIDE, MLAB ResearchAgent, OpenHands")
    url = models.URLField(blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name", "version"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="unique_agent_version")]

    def __str__(self) -> str:
        return f"{self.name} {self.version}".strip()


class LanguageModel(models.Model):
    name = models.CharField(max_length=200, unique=True)
    provider = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Team(models.Model):
    """A group of users who own experiments together (a lab, a company team)."""

    name = models.CharField(max_length=100, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="teams", blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ExperimentQuerySet(models.QuerySet):
    def visible_to(self, user) -> ExperimentQuerySet:
        """Experiments with at least one run this user may see: one whose runs are all private to
        others does not exist for them (its name, its id, its page)."""
        return self.filter(models.Exists(Run.objects.visible_to(user).filter(experiment=models.OuterRef("pk"))))


class Disclosure(models.TextChoices):
    """A yes/no an experiment discloses; "" is not disclosed, never taken as either."""

    YES = "yes", "yes"
    NO = "no", "no"
    UNKNOWN = "", "not disclosed"


class Experiment(models.Model):
    """One configuration that runs are seeds of: agent x model x hardware x time limit x settings x
    internet and test-set signal used, of one owner (a user or a team; none for catalogue, demo and
    published results). leaderboard.trust.disclosures reads and fills the disclosure fields."""

    class DisclosedBy(models.TextChoices):
        RUNNER = "runner", "recorded by a Medalboard runner"
        UPLOADER = "uploader", "stated by the uploader"
        UNKNOWN = "", "not disclosed"

    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="experiments")
    model = models.ForeignKey(LanguageModel, on_delete=models.PROTECT, related_name="experiments")
    hardware = models.CharField(max_length=200, blank=True, help_text="e.g. '1x A10 24GB, 36 vCPU, 440 GB'")
    gpu_type = models.CharField(max_length=100, blank=True)
    # None: not disclosed (an upload that states no GPUs); 0: stated or recorded as none.
    gpu_count = models.PositiveIntegerField(default=0, null=True, blank=True)
    cpu_count = models.PositiveIntegerField(null=True, blank=True)
    memory_gb = models.FloatField(null=True, blank=True)
    time_limit_hours = models.FloatField(null=True, blank=True)
    settings = models.JSONField(default=dict, blank=True)
    settings_hash = models.CharField(max_length=64, blank=True, help_text="sha256 of the canonical settings JSON")
    # Disclosures (MLE-bench's maintainers ask for them): internet and test-set signal change what a
    # result means, so they are part of the configuration; links and leakage annotate it.
    internet = models.CharField(max_length=3, choices=Disclosure.choices, default="", blank=True,
                                help_text="External knowledge or internet used by the agent")
    test_signal = models.CharField(max_length=3, choices=Disclosure.choices, default="", blank=True,
                                   help_text="Any signal from the test set (scores, labels) reached the agent")
    disclosed_by = models.CharField(max_length=10, choices=DisclosedBy.choices, default="", blank=True,
                                    help_text="Who gave the hardware and internet fields")
    source_url = models.URLField(max_length=500, blank=True, help_text="The agent's source code")
    report_url = models.URLField(max_length=500, blank=True, help_text="A tech report or paper")
    known_leakage = models.BooleanField(default=False, help_text="Known leakage of test information")
    leakage_note = models.TextField(blank=True, help_text="What leaked, and how it is known")
    name = models.CharField(max_length=300, blank=True)
    owner = models.ForeignKey(USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                              related_name="experiments")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, null=True, blank=True, related_name="experiments")
    # "user:<id>", "team:<id>" or "" (no owner): unique with the configuration, NULL-free on every database,
    # and kept when a user is deleted so their results never merge into someone else's.
    owner_key = models.CharField(max_length=40, blank=True, editable=False)
    # A re-run of another experiment's jobs (runner.reproduction): its own experiment, so its runs never
    # mix with the original's, compared with it on the original's page (leaderboard.trust.reproductions).
    reproduces = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="reproductions")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ExperimentQuerySet.as_manager()

    class Meta:
        ordering = ["agent__name", "model__name"]
        constraints = [
            models.UniqueConstraint(  # a reproduction shares its original's configuration
                fields=["agent", "model", "hardware", "time_limit_hours", "settings_hash", "internet", "test_signal",
                        "owner_key"],
                condition=models.Q(reproduces__isnull=True), name="unique_experiment_configuration_per_owner",
            ),
            models.CheckConstraint(
                condition=models.Q(owner__isnull=True) | models.Q(team__isnull=True),
                name="experiment_owned_by_a_user_or_a_team",
            ),
        ]

    def __str__(self) -> str:
        return self.name or f"{self.agent} + {self.model}"

    def save(self, *args, **kwargs) -> None:
        if self.team_id is not None or self.owner_id is not None:
            self.owner_key = owner_key(self.team or self.owner)
        super().save(*args, **kwargs)

    def disclosures(self) -> dict:
        """What the experiment discloses, as the API and CSV give it: "not disclosed" (or null for a
        number) where nobody said, never a guess."""
        return {
            "gpu_count": self.gpu_count, "gpu_type": self.gpu_type, "cpu_count": self.cpu_count,
            "memory_gb": self.memory_gb, "internet": self.get_internet_display(),
            "test_signal": self.get_test_signal_display(), "disclosed_by": self.get_disclosed_by_display(),
            "source_url": self.source_url, "report_url": self.report_url,
            "known_leakage": self.known_leakage, "leakage_note": self.leakage_note,
        }

    @property
    def owner_label(self) -> str:
        """Whose results these are: the team's name, the user's name, or "" (catalogue and demo data)."""
        if self.team_id is not None:
            return f"team {self.team.name}"
        if self.owner_id is not None:
            return self.owner.username
        return "a deleted user" if self.owner_key else ""


def owner_key(owner) -> str:
    """The key that keeps different owners' experiments apart: a Team, a user, or None."""
    if owner is None:
        return ""
    return f"team:{owner.pk}" if isinstance(owner, Team) else f"user:{owner.pk}"


class RunQuerySet(models.QuerySet):
    def visible_to(self, user) -> RunQuerySet:
        """Public runs, plus private ones for their owner and for staff."""
        if user is not None and user.is_authenticated:
            if user.is_staff:
                return self
            return self.filter(models.Q(is_private=False) | models.Q(owner=user))
        return self.filter(is_private=False)

    def for_leaderboard(self) -> RunQuerySet:
        """Graded runs with what the leaderboard and statistics read, in one query.

        A FAILED run is one this site could not grade (no grader, answers missing, a grading error):
        the agent's result is unknown, so it is neither a success nor a failure here."""
        return (
            self.filter(status=Run.Status.GRADED)
            .select_related("experiment__agent", "experiment__model", "experiment__owner", "experiment__team")
            .only(
                "id", "experiment_id", "competition_id", "seed", "status", "verification", "score",
                "valid_submission", "gold_medal", "silver_medal", "bronze_medal", "above_median", "any_medal",
                "cost_usd", "tokens_in", "tokens_out", "usage_metered", "created_at", "is_demo",
                "experiment__id", "experiment__name", "experiment__hardware", "experiment__gpu_type",
                "experiment__gpu_count", "experiment__time_limit_hours", "experiment__agent_id",
                "experiment__cpu_count", "experiment__memory_gb", "experiment__internet", "experiment__test_signal",
                "experiment__disclosed_by", "experiment__source_url", "experiment__report_url",
                "experiment__known_leakage", "experiment__leakage_note", "competition_version",
                "experiment__model_id", "experiment__agent__id", "experiment__agent__name",
                "experiment__agent__version", "experiment__model__id", "experiment__model__name",
                "experiment__owner_id", "experiment__team_id", "experiment__owner_key",
                "experiment__owner__id", "experiment__owner__username", "experiment__team__id",
                "experiment__team__name",
            )
            .order_by("created_at", "id")
        )

    # Every way Django writes runs keeps the leaderboard aggregates in step, in the same transaction
    # (leaderboard.analysis.aggregates.maintenance); deleting an experiment deletes its aggregates by cascade.
    def update(self, **kwargs) -> int:
        from leaderboard.analysis.aggregates import maintenance

        if not maintenance.COUNTED_FIELDS.intersection(kwargs):
            return super().update(**kwargs)
        with transaction.atomic(using=self.db):
            before = self._lock_keys()
            changed = super().update(**kwargs)
            status = kwargs.get("status")
            status = status if isinstance(status, str) or status is None else Run.Status.GRADED  # an expression
            counted = [(pk, e, s) for pk, e, s, was in before if Run.Status.GRADED in (was, status)]
            keys = [(e, s) for _, e, s in counted]
            if counted and kwargs.keys() & {"experiment", "experiment_id", "seed"}:  # their new keys too
                pks = [pk for pk, _, _ in counted]
                for i in range(0, len(pks), 500):
                    keys += Run.objects.filter(pk__in=pks[i:i + 500]).values_list("experiment_id", "seed")
            maintenance.refresh(keys)
        return changed

    update.alters_data = True

    def delete(self):
        from leaderboard.analysis.aggregates import maintenance

        with transaction.atomic(using=self.db):
            keys = [(e, s) for _, e, s, status in self._lock_keys() if status == Run.Status.GRADED]
            deleted = super().delete()
            maintenance.refresh(keys)
        return deleted

    delete.alters_data = True
    delete.queryset_only = True

    def bulk_create(self, objs, *args, **kwargs):
        from leaderboard.analysis.aggregates import maintenance

        with transaction.atomic(using=self.db):
            made = super().bulk_create(objs, *args, **kwargs)
            maintenance.refresh((r.experiment_id, r.seed) for r in made if r.status == Run.Status.GRADED)
        return made

    bulk_create.alters_data = True

    def bulk_update(self, objs, fields, *args, **kwargs):
        from leaderboard.analysis.aggregates import maintenance

        objs = list(objs)
        with transaction.atomic(using=self.db):
            before = Run.objects.filter(pk__in=[r.pk for r in objs])._lock_keys()
            changed = super().bulk_update(objs, fields, *args, **kwargs)
            if maintenance.COUNTED_FIELDS.intersection(fields):
                maintenance.refresh([(e, s) for _, e, s, _ in before] + [(r.experiment_id, r.seed) for r in objs])
        return changed

    bulk_update.alters_data = True

    def _lock_keys(self) -> list[tuple]:
        """(pk, experiment id, seed, status) of the matched runs, locked until the transaction ends."""
        return list(self.select_for_update(no_key=True, of=("self",)).order_by()
                    .values_list("pk", "experiment_id", "seed", "status"))


class MedalFlags(models.Model):
    """What grading a submission stores (a run's final one, or a snapshot of it); leaderboard.competitions.medals
    decides the flags."""

    score = models.FloatField(null=True, blank=True)
    submission_exists = models.BooleanField(default=False)
    valid_submission = models.BooleanField(default=False)
    gold_medal = models.BooleanField(default=False)
    silver_medal = models.BooleanField(default=False)
    bronze_medal = models.BooleanField(default=False)
    above_median = models.BooleanField(default=False)
    any_medal = models.BooleanField(default=False)
    human_rank = models.PositiveIntegerField(null=True, blank=True)
    beats_human_pct = models.FloatField(null=True, blank=True)
    grading_report = models.JSONField(default=dict, blank=True)
    grading_error = models.TextField(blank=True)

    class Meta:
        abstract = True

    def medals(self) -> medals.Medals:
        return medals.Medals(self.gold_medal, self.silver_medal, self.bronze_medal, self.above_median)

    def set_medals(self, awarded: medals.Medals) -> None:
        self.gold_medal, self.silver_medal = awarded.gold, awarded.silver
        self.bronze_medal, self.above_median = awarded.bronze, awarded.above_median
        self.any_medal = awarded.any


class Run(MedalFlags):
    class Origin(models.TextChoices):
        JOB = "job", "Run on a Medalboard runner"
        UPLOAD = "upload", "Uploaded"
        IMPORT = "import", "Imported"

    class Verification(models.TextChoices):
        VERIFIED = "verified", "Verified (graded here)"
        SELF_REPORTED = "self_reported", "Self-reported"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        GRADING = "grading", "Grading"
        GRADED = "graded", "Graded"
        FAILED = "failed", "Failed"
        # The site cannot grade it yet (no answers registered); the file's format passed its check.
        WAITING = "waiting", "Waiting for answers"

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="runs")
    competition = models.ForeignKey(
        Competition, on_delete=models.PROTECT, related_name="runs", null=True, blank=True
    )
    task_name = models.CharField(max_length=300, blank=True, help_text="The task as the log names it")
    # The competition's version when the run was graded (or its score taken): a leaderboard row never
    # mixes versions (leaderboard.analysis.aggregates).
    competition_version = models.PositiveIntegerField(default=1)
    seed = models.IntegerField(default=0)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="runs"
    )
    is_private = models.BooleanField(default=False)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.UPLOAD)
    verification = models.CharField(
        max_length=20, choices=Verification.choices, default=Verification.SELF_REPORTED
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING, db_index=True)
    # The grading claim (leaderboard.tasks.grade_run): who holds it, until when, how many tries so far;
    # the sweep (leaderboard.runs.recovery) re-queues expired claims and pending runs nobody picked up.
    grading_owner = models.CharField(max_length=100, blank=True)
    grading_lease_expires_at = models.DateTimeField(null=True, blank=True)
    grading_attempts = models.PositiveIntegerField(default=0)
    grading_enqueued_at = models.DateTimeField(null=True, blank=True)
    # Timing, cost and size.
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    tokens_in = models.BigIntegerField(null=True, blank=True)
    tokens_out = models.BigIntegerField(null=True, blank=True)
    # True when tokens and cost are the LLM gateway's own count of every call (runner.gateway), not a
    # figure the agent or an uploaded log reports about itself
    usage_metered = models.BooleanField(default=False)
    n_steps = models.PositiveIntegerField(default=0)
    trajectory_format = models.CharField(max_length=50, blank=True)
    import_warnings = models.JSONField(default=list, blank=True)
    # A research task's run: MLAgentBench's failure classes that apply (leaderboard.lib.research_failures)
    failure_classes = models.JSONField(default=list, blank=True)
    # The agent's steps as its own benchmark counts them (MLAgentBench: trace.json's steps, 14 where the
    # replay shows 34 plan/action/observation steps); None where the trajectory does not say
    agent_steps = models.PositiveIntegerField(null=True, blank=True)
    notes = models.TextField(blank=True)
    # What a run from a job needs to run again, recorded as its sandbox starts (runner.recipes): agent
    # version and image id, data version, seed, settings, hardware, time limit, backend and runtime.
    recipe = models.JSONField(default=dict, blank=True)
    # Scored against synthetic answers (seed_demo): its medals say nothing about Kaggle's humans.
    is_demo = models.BooleanField(default=False)
    content_hash = models.CharField(max_length=64, blank=True, db_index=True, help_text="Makes uploads idempotent")
    # The graded snapshots as JSON [[seconds, any medal 0/1], ...] in time order, kept by
    # leaderboard.runs.snapshots whenever a snapshot changes: the time curve reads it instead of every
    # snapshot row (4x fewer rows at 60,000 runs).
    snapshot_timeline = models.TextField(default="", blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["experiment", "competition", "seed"]),
            # /api/runs/ pages by keyset on (created_at, id), newest first (leaderboard.api.pagination).
            models.Index(fields=["-created_at", "-id"], name="run_newest_first"),
        ]
        constraints = [
            # Idempotent uploads: the hash covers the owner, the key fields and every file's digest.
            models.UniqueConstraint(fields=["content_hash"], condition=~models.Q(content_hash=""),
                                    name="unique_run_content"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.task_name or self.competition_id}, seed {self.seed})"

    def save(self, *args, **kwargs) -> None:
        """Saved together with the leaderboard aggregates of its key, old and new (see RunQuerySet)."""
        from leaderboard.analysis.aggregates import maintenance

        update_fields = kwargs.get("update_fields")
        if update_fields is not None and not maintenance.COUNTED_FIELDS.intersection(update_fields):
            return super().save(*args, **kwargs)
        with transaction.atomic():
            before = None if self._state.adding else Run.objects.filter(pk=self.pk)._lock_keys()
            super().save(*args, **kwargs)
            keys = [(e, s) for _, e, s, status in before or () if status == Run.Status.GRADED]
            after = Run.objects.filter(pk=self.pk).values_list("experiment_id", "seed", "status").first()
            if keys or (after and after[2] == Run.Status.GRADED):
                maintenance.refresh([*keys, after[:2]])

    def delete(self, *args, **kwargs):
        from leaderboard.analysis.aggregates import maintenance

        with transaction.atomic():
            keys = [(e, s) for _, e, s, status in Run.objects.filter(pk=self.pk)._lock_keys()
                    if status == Run.Status.GRADED]
            deleted = super().delete(*args, **kwargs)
            maintenance.refresh(keys)
        return deleted

    def can_edit(self, user) -> bool:
        return user.is_authenticated and (user.is_staff or self.owner_id == user.pk)

    @property
    def state(self) -> str:
        """What happened to the run, in words a reader can act on: a graded run without a file says
        "no submission", a rejected file "invalid submission", never just "graded" and "none"."""
        if self.status != Run.Status.GRADED:
            return self.get_status_display().lower()
        if self.verification == Run.Verification.SELF_REPORTED and self.score is not None:
            return "self-reported score"  # nobody here graded a file: neither "graded" nor "invalid"
        if self.score is None and not self.submission_exists:
            return "no submission"
        if self.score is None and self.competition_id is None:
            return "not graded (task outside the catalogue)"
        if not self.valid_submission:
            return "invalid submission"
        return "graded"

    @property
    def progress(self) -> str:
        """Where grading stands: queued, grading, retrying (attempt n), or failed and why."""
        n = self.grading_attempts
        if self.status == Run.Status.PENDING:
            return (f"retrying (attempt {n + 1})" if n else "queued for grading") + self.stuck_hint
        if self.status == Run.Status.GRADING:
            return f"grading (attempt {n})" if n > 1 else "grading"
        if self.status == Run.Status.FAILED:
            return f"failed: {self.grading_error}" if self.grading_error else "failed"
        return self.state

    @property
    def stuck_hint(self) -> str:
        """Said once a pending run has waited GRADING_STUCK_AFTER_S since its last change: its task may
        have been lost (a worker that died, no runner started); the sweep queues it again meanwhile."""
        from django.utils import timezone

        from leaderboard.lib.durations import format_seconds

        since = max(t for t in (self.updated_at, self.grading_lease_expires_at) if t is not None)
        waited = (timezone.now() - since).total_seconds()
        if waited < settings.GRADING_STUCK_AFTER_S:
            return ""
        return (f", waiting {format_seconds(waited)}: no worker has taken it yet (is a runner running? "
                f"`manage.py runner`); it is queued again every {format_seconds(settings.STALE_PENDING_S)}")

    @property
    def medal_label(self) -> str:
        """The medal, or "–" where no valid score exists to earn one."""
        return self.medals().label if self.score is not None else "–"

    @property
    def placing(self) -> str:
        """Where the score lands among the competition's teams, in words (ties and last place said)."""
        if self.human_rank is None or self.competition is None:
            return ""
        return medals.describe_placing(self.human_rank, self.beats_human_pct or 0.0, self.competition.n_teams)


class Artifact(models.Model):
    class Kind(models.TextChoices):
        SUBMISSION = "submission", "Submission"
        TRAJECTORY = "trajectory", "Trajectory"
        LOG = "log", "Log"
        CODE = "code", "Code"
        REPORT = "report", "Grading report"
        SNAPSHOT = "snapshot", "Submission snapshot"
        OTHER = "other", "Other"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="artifacts")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    name = models.CharField(max_length=500, help_text="Path inside the run folder, or the uploaded name")
    file = models.FileField(upload_to="runs/%Y/%m/")
    size = models.BigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["run", "kind", "name"]


class RunIntake(models.Model):
    """An upload received by the form or the API, imported into a Run by a worker (leaderboard.runs.intake).

    The request stages the files in artifact storage (`intake/`) and creates this row; the task
    `leaderboard.runs.intake.import_intake` claims it (received -> importing, an owner and a lease, attempts
    + 1), runs `services.submit_run` on the staged files and records the outcome: imported with its
    run, or failed with the reason. The sweep re-queues received intakes nobody picked up and expired
    claims, and fails an intake after INTAKE_MAX_ATTEMPTS lost claims."""

    class Status(models.TextChoices):
        RECEIVED = "received", "Received"
        IMPORTING = "importing", "Importing"
        IMPORTED = "imported", "Imported"
        FAILED = "failed", "Failed"

    class Failure(models.TextChoices):
        NONE = "", "None"
        INVALID = "invalid", "The upload was refused"
        QUOTA = "quota", "Daily grading quota used"
        STORAGE = "storage", "Artifact storage unavailable"
        INTERRUPTED = "interrupted", "Importing was interrupted"
        TIMEOUT = "timeout", "Importing took too long"
        INTERNAL = "internal", "Importing failed"

    owner = models.ForeignKey(USER_MODEL, on_delete=models.CASCADE, related_name="intakes")
    # [{"kind": "submission" | "trajectory" | "snapshot", "name": the uploaded name, "path": storage name}]
    files = models.JSONField(default=list, blank=True)
    # The form's or the API's fields: submit_run's keyword arguments, the experiment's given flat
    # (leaderboard.runs.experiments.ExperimentSpec.split).
    metadata = models.JSONField(default=dict, blank=True)
    # sha256 of the metadata and each file's kind, name and digest: an identical upload has the same.
    fingerprint = models.CharField(max_length=64, blank=True, db_index=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RECEIVED, db_index=True)
    failure = models.CharField(max_length=20, choices=Failure.choices, default=Failure.NONE, blank=True)
    error = models.TextField(blank=True)
    note = models.CharField(max_length=300, blank=True, help_text="e.g. identical to an earlier run")
    run = models.ForeignKey(Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="intakes")
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"intake {self.pk} ({self.status})"

    @property
    def done(self) -> bool:
        return self.status in (RunIntake.Status.IMPORTED, RunIntake.Status.FAILED)

    @property
    def progress(self) -> str:
        """received -> importing -> imported / failed and why, with the attempt when it was retried."""
        n = self.attempts
        if self.status == RunIntake.Status.RECEIVED:
            return f"received, retrying (attempt {n + 1})" if n else "received, waiting for a worker"
        if self.status == RunIntake.Status.IMPORTING:
            return f"importing (attempt {n})" if n > 1 else "importing"
        if self.status == RunIntake.Status.FAILED:
            return f"failed: {self.error}" if self.error else "failed"
        return f"imported as run {self.run_id}" if self.run_id else "imported (the run was deleted since)"


class Snapshot(MedalFlags):
    """A submission the agent had written `elapsed_seconds` into its run, graded like the final one.

    The file is an Artifact of the run named `snapshots/<elapsed-seconds>.csv` (docs/snapshots.md);
    leaderboard.runs.snapshots stores and grades them, leaderboard.analysis.scaling reads them for the time curve.
    Rows without an artifact are synthetic (manage.py make_scaling_data), graded when written."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        GRADING = "grading", "Grading"
        GRADED = "graded", "Graded"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="snapshots")
    elapsed_seconds = models.FloatField(help_text="Seconds since the run started")
    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    # When the sweep last published a pending snapshot's grading again (leaderboard.runs.recovery).
    grading_enqueued_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "elapsed_seconds"]
        constraints = [
            models.UniqueConstraint(fields=["run", "elapsed_seconds"], name="unique_snapshot_time"),
            models.CheckConstraint(condition=models.Q(elapsed_seconds__gte=0), name="snapshot_time_not_negative"),
        ]

    def __str__(self) -> str:
        return f"snapshot of run {self.run_id} at {self.elapsed_seconds:g} s"


class StepKind(models.TextChoices):
    """The step types of the event model; docs/trajectory-format.md defines what each one's data holds."""

    PLAN = "plan", "Plan / thought"
    ACTION = "action", "Action / tool call"
    OBSERVATION = "observation", "Observation"
    CODE = "code", "Code"
    COMMAND = "command", "Command execution"
    SCORE = "score", "Intermediate score"
    LLM = "llm", "LLM generation"
    SUBMISSION = "submission", "Submission"
    ERROR = "error", "Error"
    MESSAGE = "message", "Message"


class Trajectory(models.Model):
    """A run's steps: a JSONL file in artifact storage (leaderboard.trajectories.store writes and reads
    it), its kind counts, and an outline (tree nodes, score points, best code step) built on import."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="trajectory")
    file = models.CharField(max_length=300, help_text="Storage name of the JSONL step file")
    n_steps = models.PositiveIntegerField(default=0)
    kind_counts = models.JSONField(default=dict, blank=True)
    # JSON text, written and read with orjson: up to 5,000 tree nodes and 5,000 score points, which the
    # stdlib encoder and a jsonb parse made a visible part of an import.
    outline = models.TextField(default="{}", blank=True, help_text="JSON: tree nodes, score points, code steps")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"trajectory of run {self.run_id} ({self.n_steps} steps)"


class StepBlock(models.Model):
    """Up to a few hundred consecutive steps of a trajectory file: where they are and which kinds."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="blocks")
    first = models.PositiveIntegerField(help_text="Index of the block's first step")
    count = models.PositiveIntegerField()
    offset = models.BigIntegerField(help_text="Byte offset in the file")
    length = models.PositiveIntegerField(help_text="Bytes")
    # JSON text (written and read with orjson by trajectories.store): a block is never queried by them,
    # and text skips two JSON conversions per block on every import and every page.
    kinds = models.TextField(default="{}", help_text="JSON: steps of each kind in the block")
    diff_bases = models.TextField(
        default="{}", blank=True, help_text="JSON: code step index -> the previous version of its file, to diff against"
    )
    # Which kinds the block holds, one bit each (trajectories.store.block_index.KINDS): a filter by kind
    # skips blocks in the database instead of loading every row.
    kind_mask = models.PositiveIntegerField(default=0)
    kinds_before = models.TextField(default="{}", blank=True, help_text="JSON: steps of each kind in earlier blocks")

    class Meta:
        ordering = ["trajectory", "first"]
        constraints = [models.UniqueConstraint(fields=["trajectory", "first"], name="unique_block_start")]

    def __str__(self) -> str:
        return f"steps {self.first}-{self.first + self.count - 1} of {self.trajectory}"


@receiver(post_delete, sender=Trajectory)
def _delete_trajectory_file(sender, instance: Trajectory, **kwargs) -> None:
    """A trajectory's file goes with its row, once the deletion commits (a rollback keeps both)."""
    from django.core.files.storage import default_storage

    from leaderboard.trajectories.store import delete_file

    name = instance.file
    if name:  # the file and its search index
        transaction.on_commit(lambda: delete_file(default_storage, name))


from leaderboard.analysis.aggregates.models import LeaderboardVersion, SeedAggregate  # noqa: E402,F401 - registers the models


@receiver(m2m_changed, sender=Competition.splits.through)
def _split_membership_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    """A split's competitions changed: the aggregates of the runs in those competitions follow."""
    from leaderboard.analysis.aggregates import maintenance

    if action == "pre_clear":
        instance._cleared_competitions = (list(instance.competitions.values_list("pk", flat=True))
                                          if isinstance(instance, Split) else [instance.pk])
    elif action == "post_clear":
        maintenance.split_membership_changed(getattr(instance, "_cleared_competitions", []))
    elif action in ("post_add", "post_remove") and pk_set:
        maintenance.split_membership_changed(pk_set if isinstance(instance, Split) else [instance.pk])
from leaderboard.competitions.research_models import ResearchTask  # noqa: E402,F401 - registers the model
from leaderboard.questions.models import RunSummary, SavedQuestion  # noqa: E402,F401 - registers the models
from leaderboard.search.models import StepText  # noqa: E402,F401 - registers the model
from leaderboard.trust.models import Finding, FindingReview  # noqa: E402,F401 - registers the models
from leaderboard.trust.similarity.models import (  # noqa: E402,F401 - registers the models
    CodeFingerprint,
    CodeHashCount,
    CodeMatch,
    CodePosting,
    ReferenceCode,
)

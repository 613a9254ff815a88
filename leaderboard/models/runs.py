"""A run (one competition, one seed of an experiment), its artifacts (submission, logs, code), its snapshots,
and the intake that imports an upload into one. Every write of runs announces the (experiment, seed) keys it
changed (changes.run_keys_changed) in the same transaction, so the aggregates that listen stay in step."""

from __future__ import annotations

from django.conf import settings
from django.db import models, transaction

from leaderboard.competitions import medals
from leaderboard.models import changes
from leaderboard.models.base import USER_MODEL
from leaderboard.models.catalogue import Competition
from leaderboard.models.experiments import Experiment


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
                "id",
                "experiment_id",
                "competition_id",
                "seed",
                "status",
                "verification",
                "score",
                "valid_submission",
                "gold_medal",
                "silver_medal",
                "bronze_medal",
                "above_median",
                "any_medal",
                "cost_usd",
                "tokens_in",
                "tokens_out",
                "usage_metered",
                "created_at",
                "is_demo",
                "experiment__id",
                "experiment__name",
                "experiment__hardware",
                "experiment__gpu_type",
                "experiment__gpu_count",
                "experiment__time_limit_hours",
                "experiment__agent_id",
                "experiment__cpu_count",
                "experiment__memory_gb",
                "experiment__internet",
                "experiment__test_signal",
                "experiment__disclosed_by",
                "experiment__source_url",
                "experiment__report_url",
                "experiment__known_leakage",
                "experiment__leakage_note",
                "competition_version",
                "experiment__model_id",
                "experiment__agent__id",
                "experiment__agent__name",
                "experiment__agent__version",
                "experiment__model__id",
                "experiment__model__name",
                "experiment__owner_id",
                "experiment__team_id",
                "experiment__owner_key",
                "experiment__owner__id",
                "experiment__owner__username",
                "experiment__team__id",
                "experiment__team__name",
            )
            .order_by("created_at", "id")
        )

    # Every way Django writes runs keeps the leaderboard aggregates in step, in the same transaction
    # (announced by models.changes, refreshed by leaderboard.analysis.aggregates); deleting an experiment
    # deletes its aggregates by cascade.
    def update(self, **kwargs) -> int:
        if not changes.COUNTED_FIELDS.intersection(kwargs):
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
                    keys += Run.objects.filter(pk__in=pks[i : i + 500]).values_list("experiment_id", "seed")
            changes.announce(keys)
        return changed

    update.alters_data = True

    def delete(self):
        with transaction.atomic(using=self.db):
            keys = [(e, s) for _, e, s, status in self._lock_keys() if status == Run.Status.GRADED]
            deleted = super().delete()
            changes.announce(keys)
        return deleted

    delete.alters_data = True
    delete.queryset_only = True

    def bulk_create(self, objs, *args, **kwargs):
        with transaction.atomic(using=self.db):
            made = super().bulk_create(objs, *args, **kwargs)
            changes.announce((r.experiment_id, r.seed) for r in made if r.status == Run.Status.GRADED)
        return made

    bulk_create.alters_data = True

    def bulk_update(self, objs, fields, *args, **kwargs):
        objs = list(objs)
        with transaction.atomic(using=self.db):
            before = Run.objects.filter(pk__in=[r.pk for r in objs])._lock_keys()
            changed = super().bulk_update(objs, fields, *args, **kwargs)
            if changes.COUNTED_FIELDS.intersection(fields):
                changes.announce([(e, s) for _, e, s, _ in before] + [(r.experiment_id, r.seed) for r in objs])
        return changed

    bulk_update.alters_data = True

    def _lock_keys(self) -> list[tuple]:
        """(pk, experiment id, seed, status) of the matched runs, locked until the transaction ends."""
        return list(
            self.select_for_update(no_key=True, of=("self",))
            .order_by()
            .values_list("pk", "experiment_id", "seed", "status")
        )


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
    competition = models.ForeignKey(Competition, on_delete=models.PROTECT, related_name="runs", null=True, blank=True)
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
    verification = models.CharField(max_length=20, choices=Verification.choices, default=Verification.SELF_REPORTED)
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
    # What a run from a job needs to run again, recorded as its sandbox starts (runner.jobs.recipes): agent
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
            models.UniqueConstraint(
                fields=["content_hash"], condition=~models.Q(content_hash=""), name="unique_run_content"
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.task_name or self.competition_id}, seed {self.seed})"

    def save(self, *args, **kwargs) -> None:
        """Saved together with the leaderboard aggregates of its key, old and new (see RunQuerySet)."""
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and not changes.COUNTED_FIELDS.intersection(update_fields):
            return super().save(*args, **kwargs)
        with transaction.atomic():
            before = None if self._state.adding else Run.objects.filter(pk=self.pk)._lock_keys()
            super().save(*args, **kwargs)
            keys = [(e, s) for _, e, s, status in before or () if status == Run.Status.GRADED]
            after = Run.objects.filter(pk=self.pk).values_list("experiment_id", "seed", "status").first()
            if keys or (after and after[2] == Run.Status.GRADED):
                changes.announce([*keys, after[:2]])

    def delete(self, *args, **kwargs):
        with transaction.atomic():
            keys = [
                (e, s) for _, e, s, status in Run.objects.filter(pk=self.pk)._lock_keys() if status == Run.Status.GRADED
            ]
            deleted = super().delete(*args, **kwargs)
            changes.announce(keys)
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
        return (
            f", waiting {format_seconds(waited)}: no worker has taken it yet (is a runner running? "
            f"`manage.py runner`); it is queued again every {format_seconds(settings.STALE_PENDING_S)}"
        )

    @property
    def medal_label(self) -> str:
        """The medal, or "–" where no valid score exists to earn one."""
        return self.medals().label if self.score is not None else "–"

    @property
    def gpus_used(self) -> str:
        """The GPUs the run's sandbox was given, as its runner detected them ("2x NVIDIA A10 · driver
        550.54.15"), "none" for a job's run without any; "" without a recipe (an upload's hardware is
        only what its experiment states)."""
        return self.describe_gpus((self.recipe or {}).get("hardware"))

    @staticmethod
    def describe_gpus(hardware) -> str:
        """A recipe's "hardware" (runner.jobs.recipes) in words, as gpus_used gives it."""
        if not isinstance(hardware, dict):
            return ""
        names = [str(name) or "GPU" for name in hardware.get("gpu_names") or []]
        if not names:
            return "none"
        models = ", ".join(f"{names.count(name)}x {name}" for name in dict.fromkeys(names))
        driver = hardware.get("gpu_driver")
        return f"{models} · driver {driver}" if driver else models

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

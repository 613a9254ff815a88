"""Results' identity: Agent x LanguageModel x hardware x time limit x settings = Experiment, owned by a user or
a Team."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from leaderboard.models.base import USER_MODEL


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
        runs = self.model._meta.get_field("runs").related_model.objects  # Run, defined above this module
        return self.filter(models.Exists(runs.visible_to(user).filter(experiment=models.OuterRef("pk"))))


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
    internet = models.CharField(
        max_length=3,
        choices=Disclosure.choices,
        default="",
        blank=True,
        help_text="External knowledge or internet used by the agent",
    )
    test_signal = models.CharField(
        max_length=3,
        choices=Disclosure.choices,
        default="",
        blank=True,
        help_text="Any signal from the test set (scores, labels) reached the agent",
    )
    disclosed_by = models.CharField(
        max_length=10,
        choices=DisclosedBy.choices,
        default="",
        blank=True,
        help_text="Who gave the hardware and internet fields",
    )
    source_url = models.URLField(max_length=500, blank=True, help_text="The agent's source code")
    report_url = models.URLField(max_length=500, blank=True, help_text="A tech report or paper")
    known_leakage = models.BooleanField(default=False, help_text="Known leakage of test information")
    leakage_note = models.TextField(blank=True, help_text="What leaked, and how it is known")
    name = models.CharField(max_length=300, blank=True)
    owner = models.ForeignKey(USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="experiments")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, null=True, blank=True, related_name="experiments")
    # "user:<id>", "team:<id>" or "" (no owner): unique with the configuration, NULL-free on every database,
    # and kept when a user is deleted so their results never merge into someone else's.
    owner_key = models.CharField(max_length=40, blank=True, editable=False)
    # A re-run of another experiment's jobs (runner.jobs.reproduction): its own experiment, so its runs never
    # mix with the original's, compared with it on the original's page (leaderboard.trust.reproductions).
    reproduces = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="reproductions"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ExperimentQuerySet.as_manager()

    class Meta:
        ordering = ["agent__name", "model__name"]
        constraints = [
            models.UniqueConstraint(  # a reproduction shares its original's configuration
                fields=[
                    "agent",
                    "model",
                    "hardware",
                    "time_limit_hours",
                    "settings_hash",
                    "internet",
                    "test_signal",
                    "owner_key",
                ],
                condition=models.Q(reproduces__isnull=True),
                name="unique_experiment_configuration_per_owner",
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
            "gpu_count": self.gpu_count,
            "gpu_type": self.gpu_type,
            "cpu_count": self.cpu_count,
            "memory_gb": self.memory_gb,
            "internet": self.get_internet_display(),
            "test_signal": self.get_test_signal_display(),
            "disclosed_by": self.get_disclosed_by_display(),
            "source_url": self.source_url,
            "report_url": self.report_url,
            "known_leakage": self.known_leakage,
            "leakage_note": self.leakage_note,
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

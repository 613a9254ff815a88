"""A saved question, and the stored replies of the optional LLM summary."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SavedQuestionQuerySet(models.QuerySet):
    def visible_to(self, user) -> SavedQuestionQuerySet:
        """Public questions, plus the user's own. What a question counts is always the viewer's runs."""
        if user is not None and user.is_authenticated:
            return self.filter(models.Q(is_public=True) | models.Q(owner=user))
        return self.filter(is_public=True)


class SavedQuestion(models.Model):
    """A search (a query and its filters) or a failure filter (a signature, or a prefix of one ending
    in `*`) under a name; a question matches runs, never holds them, so it reveals nothing of runs
    its viewer may not see."""

    class Kind(models.TextChoices):
        SEARCH = "search", "search"
        FAILURE = "failure", "failure signature"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_questions")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    query = models.CharField(max_length=500, blank=True, help_text="A search query (docs/search.md)")
    filters = models.JSONField(default=dict, blank=True, help_text="The search's filters (competition, kind, ...)")
    signature = models.CharField(
        max_length=200,
        blank=True,
        help_text="A failure signature as the failure table shows it, or a prefix ending in *",
    )
    is_public = models.BooleanField(default=False, help_text="Others may see and use it (it counts their own runs)")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = SavedQuestionQuerySet.as_manager()

    class Meta:
        app_label = "leaderboard"
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="savedquestion_owner_name")]

    def __str__(self) -> str:
        return self.name

    def signature_matches(self, label: str) -> bool:
        if self.signature.endswith("*"):
            return label.startswith(self.signature[:-1])
        return label == self.signature

    @property
    def describes(self) -> str:
        """The question as it was asked, in one line."""
        if self.kind == self.Kind.FAILURE:
            return f"failure signature {self.signature}"
        shown = ", ".join(f"{k}={v}" for k, v in sorted(self.filters.items()) if v not in ("", None))
        return f"search {self.query}" + (f" ({shown})" if shown else "")


class RunSummary(models.Model):
    """One reply of the site's model to "what did these runs do wrong", with what it cost. The prompt
    is not kept (it is rebuilt from the runs); the reply is stored as the model gave it and its step
    links are checked against `steps` each time it is shown."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="run_summaries")
    selection = models.CharField(max_length=300, help_text="What was summarised, in words")
    runs = models.JSONField(default=list, help_text="The run ids summarised")
    steps = models.JSONField(default=list, help_text="[run id, step index] pairs shown to the model")
    model = models.CharField(max_length=200)
    reply = models.TextField()
    tokens_in = models.PositiveIntegerField(null=True)
    tokens_out = models.PositiveIntegerField(null=True)
    cost_usd = models.FloatField(null=True, help_text="From the site's LLM price table; null when the model has none")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        app_label = "leaderboard"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"summary {self.pk} of {len(self.runs)} runs"

"""A run's trajectory: one typed event model for every agent (StepKind), stored as a file indexed by StepBlocks."""

from __future__ import annotations

from django.db import models

from leaderboard.models.runs import Run


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

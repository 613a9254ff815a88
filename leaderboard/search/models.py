"""The search index's rows: one per stored step. The engines' own structures (an FTS5 table on
SQLite, a tsvector column and GIN indexes on PostgreSQL) are made by migration 0027 beside it."""

from __future__ import annotations

from django.db import models


class StepText(models.Model):
    """A step's searchable text (search.text.step_text), bounded. Rows go with their trajectory (a
    re-import replaces them) and with their run (a deletion)."""

    trajectory = models.ForeignKey("leaderboard.Trajectory", on_delete=models.CASCADE, related_name="search_rows")
    run = models.ForeignKey("leaderboard.Run", on_delete=models.CASCADE, related_name="+", db_index=False)
    index = models.PositiveIntegerField(help_text="The step's index in its run")
    kind = models.CharField(max_length=20)
    text = models.TextField()
    # PostgreSQL only (empty on SQLite): the distinct words, which its tsvector column is built from as
    # they are, so a word there is a word as search.text defines it, whatever the database's locale.
    words = models.TextField(blank=True, default="")

    class Meta:
        app_label = "leaderboard"
        # Hits come newest run first, each run's steps in order: the cursor walks this index.
        indexes = [models.Index(fields=["-run", "index"], name="steptext_newest_run_first")]

    def __str__(self) -> str:
        return f"step {self.index} of run {self.run_id}"

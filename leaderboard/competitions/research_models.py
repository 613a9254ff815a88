"""A research task (MLAgentBench's layout) beside its Competition: what the agent starts from and the
starter's baseline.

The task's public workspace (`env/`) is the competition's public_data_dir; where its private
`scripts/` (eval.py and what it reads) live is kept in CompetitionAnswers.research_scripts_dir,
with the other private locations, so nothing that shows this row can reach it.
"""

from __future__ import annotations

from django.db import models


class ResearchTask(models.Model):
    class Baseline(models.TextChoices):
        PENDING = "pending", "Waiting for a runner"
        RUNNING = "running", "Running the starter"
        DONE = "done", "Computed by running the starter"
        GIVEN = "given", "Given at import"
        FAILED = "failed", "Could not be computed"
        NONE = "none", "No starter script to run"

    competition = models.OneToOneField("leaderboard.Competition", on_delete=models.CASCADE, related_name="research")
    research_problem = models.TextField(blank=True, help_text="research_problem.txt: the agent's instructions")
    entry_script = models.CharField(max_length=300, blank=True, help_text="The starter the baseline runs")
    # {path below env/: sha256} of the files read_only_files.txt names: checked unchanged after a run
    read_only_files = models.JSONField(default=dict, blank=True)
    read_only_patterns = models.JSONField(default=list, blank=True, help_text="read_only_files.txt's lines")
    # [[path below env/, bytes], ...] of the starter workspace, for the task's page (bounded at import)
    starter_files = models.JSONField(default=list, blank=True)
    starter_code = models.TextField(blank=True, help_text="The entry script's text, for the task's page")
    time_limit_s = models.FloatField(default=3600.0, help_text="How long the starter may run for the baseline")
    baseline_status = models.CharField(max_length=20, choices=Baseline.choices, default=Baseline.PENDING)
    baseline_log = models.TextField(blank=True, help_text="The end of the starter's output when it was run")
    baseline_error = models.TextField(blank=True)
    baseline_seconds = models.FloatField(null=True, blank=True)  # the mean over the starter's runs
    # Each starter run of the baseline: [{"score": float | None, "seconds": float, "error": str}, ...]
    # (MLAgentBench averages several Baseline runs; the baseline is the mean of those that scored)
    baseline_runs = models.JSONField(default=list, blank=True)
    baseline_at = models.DateTimeField(null=True, blank=True)
    # The claim of the runner computing it (webapp.leases: runner.research.baseline.BASELINES)
    baseline_owner = models.CharField(max_length=200, blank=True)
    baseline_lease_expires_at = models.DateTimeField(null=True, blank=True)
    baseline_attempts = models.PositiveIntegerField(default=0)
    content_hash = models.CharField(max_length=64, blank=True, help_text="sha256 of env/ and scripts/ as imported")

    class Meta:
        app_label = "leaderboard"

    def __str__(self) -> str:
        return f"research task {self.competition_id}"

    @property
    def baseline_spread(self) -> dict | None:
        """The scored starter runs' spread: {n, low, high, sd, relative (high - low over |mean|, 0.1 = 10 %)};
        None with fewer than two."""
        import statistics

        scores = [r["score"] for r in self.baseline_runs if isinstance(r, dict) and r.get("score") is not None]
        if len(scores) < 2:
            return None
        mean = statistics.fmean(scores)
        relative = (max(scores) - min(scores)) / abs(mean) if mean else None
        return {"n": len(scores), "low": min(scores), "high": max(scores), "sd": statistics.stdev(scores),
                "relative": relative, "relative_pct": None if relative is None else 100 * relative}

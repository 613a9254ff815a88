"""The LLM gateway of a task on a remote runner, the site's side: what the claim answer tells the
runner's gateway (the site's price table, the job's LLM limits, the grace before a spent budget stops
the agent; the keys are among the job's secrets in the sandbox's environment), and the meter's report
the runner sends with its finish, read (runner.jobs.llm_usage) into the run's
tokens, cost and notes, and the run's model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from leaderboard.models import Run
from leaderboard.runs import job_runs
from runner.gateway.limits import SETTING_NAMES
from runner.jobs import attempts, llm_usage
from runner.models import Job


def claim_part(job: Job) -> dict:
    """The gateway's configuration for the runner that claimed one of the job's tasks."""
    return {
        "settings": {key: job.settings[key] for key in SETTING_NAMES.values() if key in (job.settings or {})},
        "prices": {pattern: list(price) for pattern, price in llm_usage.load_prices().items()},
        "budget_grace_s": settings.JOB_BUDGET_GRACE_S,
    }


@dataclass
class Metered:
    usage: dict | None  # the run's usage fields; None: the task had no gateway
    note: str  # what the job page says about the run's LLM

    def error(self, error: str) -> str:
        return llm_usage.with_note(error, self.usage, self.note)


def metered(job: Job, report: Any) -> Metered:
    """The runner's meter report (untrusted: every value checked), its texts redacted with the job's
    secrets as the runner's own redaction should have."""
    usage, note = llm_usage.usage_and_note(report)
    return Metered(usage, attempts.redactor_for(job).text(note))


def settle(run: Run, job: Job, report: Any, found: Metered) -> list[str]:
    """Record the usage on the run and settle its model; the notes for its warnings."""
    if found.usage:
        job_runs.record_usage(run, found.usage)
    model_note = attempts.settle_model(run, job, llm_usage.models_called(report))
    return [note for note in (found.note, model_note) if note]

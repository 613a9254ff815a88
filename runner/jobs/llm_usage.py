"""The site's side of the LLM gateway's metering: the price table a gateway is given, and a run's
usage from the meter's report at its end (runner.host.llm_access.finish), whichever runner sent it.

    usage, note = usage_and_note(report)   # Run's tokens_in, tokens_out, cost_usd, usage_metered
    error = with_note(outcome_error, usage, note)

A runner's report comes from the finish it sends (runner.api_v1.writes), so each value is checked as
untrusted input: counts and costs as the run's columns hold them (unknown past them, never a database
error), texts bounded.
"""

from __future__ import annotations

from typing import Any

from leaderboard.runs.job_runs import to_count, to_float
from runner.gateway.prices import Price, PriceTable

TEXT_CHARS = 1000
MODELS = 50  # models named in one report; more is not a run of one agent
MODEL_CHARS = 200


def load_prices() -> dict[str, Price]:
    """The site's price table (runner.models.LlmPrice) as the plain dict the gateway takes."""
    from runner.models import LlmPrice

    return {
        row.pattern: (float(row.input_usd_per_mtok), float(row.output_usd_per_mtok)) for row in LlmPrice.objects.all()
    }


def site_cost(model: str, tokens_in: int | None, tokens_out: int | None) -> float | None:
    """What a call of the site's own (an LLM summary) cost, by the price table as it is now."""
    return PriceTable(load_prices()).cost(model, tokens_in, tokens_out)


def usage_and_note(report: Any) -> tuple[dict | None, str]:
    """The run's usage fields from the meter's report (None without a gateway) and what the job page
    should say about the run's LLM ("" when nothing needs saying)."""
    if not isinstance(report, dict):
        return None, ""
    unpriced = to_count(report.get("unpriced_calls")) or 0
    cost = to_float(report.get("cost_usd"))
    # Totals past what the run's columns hold (an upstream's counts are summed as it reports them) are
    # unknown rather than a database error that would lose the run's outputs.
    usage = {
        "tokens_in": to_count(report.get("tokens_in")),
        "tokens_out": to_count(report.get("tokens_out")),
        "usage_metered": True,
        # a call whose model has no price leaves the cost unknown rather than too low
        "cost_usd": None if unpriced or cost is None or cost < 0 else to_float(round(cost, 6)),
    }
    notes = [_text(report.get("status"))]
    spent = _text(report.get("budget_refused"))
    if spent:
        notes.append(f"the LLM gateway refused calls past the job's budget: {spent}")
    if unpriced:
        notes.append(f"{unpriced} LLM calls were to models without a price: no cost recorded")
    return usage, "; ".join(n for n in notes if n)


def with_note(error: str, usage: dict | None, note: str) -> str:
    """The task's error with the gateway's note: said when the run failed or used its LLM."""
    return "; ".join(part for part in (error, note if error or usage else "") if part)


def models_called(report: Any) -> dict[str, int]:
    """The models the run's metered calls went to (model -> calls), from the report."""
    models = report.get("models") if isinstance(report, dict) else None
    if not isinstance(models, dict):
        return {}
    called = {name[:MODEL_CHARS]: to_count(n) for name, n in list(models.items())[:MODELS] if isinstance(name, str)}
    return {name: n for name, n in called.items() if name and n}


def _text(value: Any) -> str:
    return value[:TEXT_CHARS] if isinstance(value, str) else ""

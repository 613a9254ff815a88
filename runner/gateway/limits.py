"""A job's LLM budget and the running totals a gateway keeps against it.

    limits = Limits.from_settings(job.settings)   # llm_max_tokens, llm_max_cost_usd, llm_max_calls, llm_max_concurrent

A call is admitted while every limit holds; past one, the gateway answers 429 with the reason. Calls
and concurrency are counted at admission, so they are never exceeded. Tokens and cost are known only
when a reply ends: calls already running when the budget runs out finish, and the next is refused.
With a cost limit, a model missing from the price table is refused too, since its cost cannot count.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from runner.gateway.prices import PriceTable

SETTING_NAMES = {"max_tokens": "llm_max_tokens", "max_cost_usd": "llm_max_cost_usd", "max_calls": "llm_max_calls",
                 "max_concurrent": "llm_max_concurrent"}


@dataclass(frozen=True)
class Limits:
    max_tokens: int | None = None  # input + output, over the whole run
    max_cost_usd: float | None = None
    max_calls: int | None = None
    max_concurrent: int | None = None

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> Limits:
        """The limits named in a job's settings; ValueError naming the setting for a bad value."""
        values = {}
        for field_name, key in SETTING_NAMES.items():
            value = settings.get(key)
            if value is None:
                continue
            number = _positive(value, key)
            values[field_name] = number if field_name == "max_cost_usd" else int(number)
        return cls(**values)


def _positive(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise ValueError(f"{key} must be a positive number, not {value!r}")
    return value


@dataclass
class Totals:
    calls: int = 0  # admitted calls, whatever their outcome
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    refused: int = 0  # requests answered by the gateway itself (limits, tokens, unknown paths)
    in_flight: int = 0
    unpriced_calls: int = 0  # calls whose model has no price: not in cost_usd

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))  # dataclasses.asdict deep-copies: ten times slower, on every call


class Meter:
    """Admission against the limits and the totals; safe to read from another thread."""

    def __init__(self, limits: Limits, prices: PriceTable) -> None:
        self.limits, self.prices = limits, prices
        self._totals = Totals()
        self._models: Counter[str] = Counter()  # finished calls per model, as the requests named it
        self._lock = threading.Lock()
        self._budget_refused: tuple[float, str] | None = None

    def admit(self, model: str) -> tuple[str, str] | None:
        """None if the call may go, else (the limit's name, a message saying why not); counts it if it goes."""
        with self._lock:
            refusal = self._refusal(model)
            if refusal:
                self._totals.refused += 1
                if self._budget_refused is None and self._spent():
                    self._budget_refused = (time.monotonic(), refusal[1])
                return refusal
            self._totals.calls += 1
            self._totals.in_flight += 1
        return None

    def finish(self, model: str, tokens_in: int | None, tokens_out: int | None) -> float | None:
        """Count a finished call's tokens; its cost (None when the model has no price)."""
        cost = self.prices.cost(model, tokens_in, tokens_out)
        with self._lock:
            t = self._totals
            t.in_flight -= 1
            self._models[model] += 1
            t.tokens_in += tokens_in or 0
            t.tokens_out += tokens_out or 0
            if cost is None:
                t.unpriced_calls += 1
            else:
                t.cost_usd += cost
        return cost

    def refused(self) -> None:
        with self._lock:
            self._totals.refused += 1

    def totals(self) -> Totals:
        with self._lock:
            return copy.copy(self._totals)

    def models(self) -> dict[str, int]:
        """The models the run's metered calls went to, with their number of calls."""
        with self._lock:
            return {model: n for model, n in self._models.items() if model}

    def budget_refused(self) -> tuple[float, str] | None:
        """(time.monotonic() of it, the reason) of the first call refused because the job's budget
        (calls, tokens or cost) is spent: waiting cannot change that. None until then."""
        with self._lock:
            return self._budget_refused

    def _spent(self) -> bool:
        lim, t = self.limits, self._totals
        return ((lim.max_calls is not None and t.calls >= lim.max_calls)
                or (lim.max_tokens is not None and t.tokens_in + t.tokens_out >= lim.max_tokens)
                or (lim.max_cost_usd is not None and t.cost_usd >= lim.max_cost_usd))

    def _refusal(self, model: str) -> tuple[str, str] | None:
        lim, t = self.limits, self._totals
        if lim.max_calls is not None and t.calls >= lim.max_calls:
            return "max_calls", f"this job's limit of {lim.max_calls:,} LLM calls is reached"
        if lim.max_tokens is not None and t.tokens_in + t.tokens_out >= lim.max_tokens:
            return "max_tokens", (f"this job's limit of {lim.max_tokens:,} LLM tokens is reached "
                                  f"({t.tokens_in + t.tokens_out:,} used)")
        if lim.max_cost_usd is not None:
            if t.cost_usd >= lim.max_cost_usd:
                return "max_cost_usd", (f"this job's LLM cost limit of ${lim.max_cost_usd:g} is reached "
                                        f"(${t.cost_usd:.4f} spent)")
            if self.prices.price(model) is None:
                return "max_cost_usd", (f"model {model!r} has no price in the site's LLM price table, so this job's "
                                        f"cost limit cannot be kept; an admin can add one")
        if lim.max_concurrent is not None and t.in_flight >= lim.max_concurrent:
            return "max_concurrent", f"this job allows {lim.max_concurrent:,} concurrent LLM calls; wait for one to end"
        return None

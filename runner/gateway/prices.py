"""What a call costs: USD per million input and output tokens, per model, from the site's price table.

The gateway takes a plain {pattern: (input, output)} dict, so nothing in its hot path touches the
database; `runner.jobs.llm_usage.load_prices()` reads it from runner.models.LlmPrice when the run starts
(on the site, for the claim answer a runner gets). A pattern is a
model name, or a prefix ending in `*` ("gpt-4o*", "anthropic/claude-*"); the exact name wins, then
the longest prefix.
"""

from __future__ import annotations

Price = tuple[float, float]  # USD per 1M input tokens, per 1M output tokens


class PriceTable:
    def __init__(self, prices: dict[str, Price] | None = None) -> None:
        prices = prices or {}
        self.exact = {p: tuple(map(float, v)) for p, v in prices.items() if not p.endswith("*")}
        self.prefixes = sorted(((p[:-1], tuple(map(float, v))) for p, v in prices.items() if p.endswith("*")),
                               key=lambda item: len(item[0]), reverse=True)

    def price(self, model: str) -> Price | None:
        if model in self.exact:
            return self.exact[model]
        return next((price for prefix, price in self.prefixes if model.startswith(prefix)), None)

    def cost(self, model: str, tokens_in: int | None, tokens_out: int | None) -> float | None:
        """USD for these tokens, or None when the model has no price."""
        price = self.price(model)
        if price is None:
            return None
        return ((tokens_in or 0) * price[0] + (tokens_out or 0) * price[1]) / 1_000_000

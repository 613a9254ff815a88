"""The site's configured model: one OpenAI-compatible chat call (meant to go through the LLM gateway,
which keeps the key and meters the call), and what its tokens cost by the site's price table.

The model, URL and token are the LLM judge's (MEDALBOARD_TRUST_JUDGE_*): one configured model for
everything the site asks. The price table belongs to the runner (runner.models.LlmPrice), which this
package may not import: the runner registers its cost function here when its app loads (`price_with`),
so a site without the runner app prices nothing (cost unknown), never wrongly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import httpx
from django.conf import settings

CostSource = Callable[[str, int | None, int | None], float | None]
_cost_source: list[CostSource] = []


@dataclass(frozen=True)
class Reply:
    text: str
    tokens_in: int | None
    tokens_out: int | None


def configured() -> bool:
    return bool(settings.TRUST_JUDGE_MODEL and settings.TRUST_JUDGE_URL)


def model() -> str:
    return settings.TRUST_JUDGE_MODEL


def complete(client: httpx.Client, messages: list[dict], **options) -> Reply:
    """One chat completion of the configured model; raises httpx.HTTPError, or KeyError/TypeError/
    IndexError/ValueError on a reply that is not a chat completion."""
    response = client.post(
        f"{settings.TRUST_JUDGE_URL}/chat/completions",
        headers=_headers(),
        json={"model": settings.TRUST_JUDGE_MODEL, "messages": messages, **options},
    )
    response.raise_for_status()
    body = response.json()
    usage = body.get("usage") or {}
    return Reply(
        str(body["choices"][0]["message"]["content"] or ""),
        _count(usage.get("prompt_tokens")),
        _count(usage.get("completion_tokens")),
    )


def client() -> httpx.Client:
    return httpx.Client(timeout=settings.TRUST_JUDGE_TIMEOUT_S)


def _headers() -> dict[str, str]:
    token = settings.TRUST_JUDGE_TOKEN
    return {"Authorization": f"Bearer {token}"} if token else {}


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def price_with(source: CostSource) -> None:
    """`source(model, tokens_in, tokens_out) -> USD or None`: the runner's price table."""
    _cost_source[:] = [source]


def cost(model_name: str, tokens_in: int | None, tokens_out: int | None) -> float | None:
    return _cost_source[0](model_name, tokens_in, tokens_out) if _cost_source else None

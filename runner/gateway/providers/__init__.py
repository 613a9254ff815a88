"""The LLM providers the gateway can put behind itself: one module per API family, one registry.

    provider = PROVIDERS["anthropic"]
    provider_for_key("OPENAI_API_KEY")  # -> the OpenAI provider, for a job secret of that name
"""

from __future__ import annotations

from runner.gateway.providers.anthropic import Anthropic
from runner.gateway.providers.base import Provider, Usage
from runner.gateway.providers.gemini import Gemini
from runner.gateway.providers.openai import XAI, DeepSeek, Groq, Mistral, OpenAI, OpenRouter

__all__ = ["PROVIDERS", "Provider", "Usage", "provider_for_key"]

PROVIDERS: dict[str, Provider] = {
    p.name: p for p in (OpenAI(), Anthropic(), OpenRouter(), Gemini(), Groq(), DeepSeek(), Mistral(), XAI())
}
_BY_KEY = {name: provider for provider in PROVIDERS.values() for name in provider.key_names}


def provider_for_key(name: str) -> Provider | None:
    """The provider whose key a job secret of this name is, if any."""
    return _BY_KEY.get(name)

"""OpenAI and the services that speak its API (OpenRouter, Groq, DeepSeek, Mistral, xAI).

Chat Completions report `usage.prompt_tokens` / `completion_tokens`; the Responses API
`usage.input_tokens` / `output_tokens` (in a stream, on the `response.completed` event). A streamed
chat completion only reports usage when asked (`stream_options.include_usage`), so the gateway asks;
the extra chunk that brings it (empty `choices`, the usage) reaches only a client that asked too.
"""

from __future__ import annotations

import json
from typing import Any

from runner.gateway.providers.base import Provider, Usage, count, dig, texts

STREAM_USAGE_PATHS = ("/chat/completions", "/completions")


class OpenAI(Provider):
    name = "openai"
    key_names = ("OPENAI_API_KEY",)
    base_url_vars = ("OPENAI_BASE_URL", "OPENAI_API_BASE")
    sdk_suffix = "/v1"
    prompt_fields = ("instructions", "messages", "input", "prompt")

    def prepare(self, path: str, body: dict) -> bool:
        if body.get("stream") is not True or not path.endswith(STREAM_USAGE_PATHS):
            return False
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage") is True:
            return False
        body["stream_options"] = {**(options if isinstance(options, dict) else {}), "include_usage": True}
        return True

    def added_by_gateway(self, event: Any) -> bool:
        return isinstance(event, dict) and event.get("choices") == [] and event.get("usage") is not None

    def usage(self, obj: Any) -> Usage | None:
        usage = dig(obj, "usage") or dig(obj, "response", "usage")
        if not isinstance(usage, dict):
            return None
        tokens_in = count(usage.get("prompt_tokens", usage.get("input_tokens")))
        tokens_out = count(usage.get("completion_tokens", usage.get("output_tokens")))
        return Usage(tokens_in, tokens_out)

    def reply(self, obj: Any) -> str:
        kind = dig(obj, "type")
        if kind in ("response.output_text.delta", "response.function_call_arguments.delta"):  # Responses stream
            return obj.get("delta") if isinstance(obj.get("delta"), str) else ""
        if kind == "response.output_item.added":  # a function call's name comes first, its arguments in deltas
            item = dig(obj, "item")
            return _tool_call_text({"name": item.get("name")}) if dig(item, "type") == "function_call" else ""
        if isinstance(dig(obj, "output"), list):  # a whole Responses API response
            return "".join(_output_text(item) for item in obj["output"])
        return "".join(_choice_text(choice) for choice in (dig(obj, "choices") or []))


def _output_text(item: Any) -> str:
    """One item of a Responses API output: a message's text, or a function call as the agent receives it."""
    if dig(item, "type") == "function_call":
        return _tool_call_text(item)
    return texts(dig(item, "content"), "text")


def _choice_text(choice: Any) -> str:
    message = dig(choice, "message") or dig(choice, "delta")
    message = message if isinstance(message, dict) else {}
    parts = [text for text in (message.get("content"), dig(choice, "text")) if isinstance(text, str)]
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        function = dig(call, "function")
        parts.append(_tool_call_text(function if isinstance(function, dict) else {}))
    return "".join(parts)


def _tool_call_text(function: dict) -> str:
    name, arguments = function.get("name"), function.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments) if arguments is not None else ""
    return (f"[tool call {name}] " if isinstance(name, str) and name else "") + (arguments or "")


class OpenRouter(OpenAI):
    name = "openrouter"
    key_names = ("OPENROUTER_API_KEY",)
    base_url_vars = ("OPENROUTER_BASE_URL", "OPENROUTER_API_BASE")


class Groq(OpenAI):
    name = "groq"
    key_names = ("GROQ_API_KEY",)
    base_url_vars = ("GROQ_BASE_URL", "GROQ_API_BASE")


class DeepSeek(OpenAI):
    name = "deepseek"
    key_names = ("DEEPSEEK_API_KEY",)
    base_url_vars = ("DEEPSEEK_BASE_URL", "DEEPSEEK_API_BASE")


class Mistral(OpenAI):
    name = "mistral"
    key_names = ("MISTRAL_API_KEY",)
    base_url_vars = ("MISTRAL_BASE_URL", "MISTRAL_API_BASE")


class XAI(OpenAI):
    name = "xai"
    key_names = ("XAI_API_KEY",)
    base_url_vars = ("XAI_BASE_URL", "XAI_API_BASE")

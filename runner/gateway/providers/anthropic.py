"""Anthropic's Messages API.

Input tokens are `input_tokens` plus the cached ones (`cache_creation_input_tokens`,
`cache_read_input_tokens`), which Anthropic counts apart: the prompt's whole size, as OpenAI's
`prompt_tokens` is. A stream reports input on `message_start` and the running output count on each
`message_delta`; the last one is the total.
"""

from __future__ import annotations

import json
from typing import Any

from runner.gateway.providers.base import Provider, Usage, count, dig

INPUT_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class Anthropic(Provider):
    name = "anthropic"
    key_names = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    base_url_vars = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE")
    prompt_fields = ("system", "messages")

    def auth_headers(self, key_name: str, key: str) -> list[tuple[str, str]]:
        if key_name == "ANTHROPIC_AUTH_TOKEN":  # an OAuth-style token, sent as the SDK sends it
            return [("authorization", f"Bearer {key}")]
        return [("x-api-key", key)]

    def usage(self, obj: Any) -> Usage | None:
        usage = dig(obj, "usage") or dig(obj, "message", "usage")  # a response or message_delta; message_start
        if not isinstance(usage, dict):
            return None
        inputs = [count(usage.get(name)) for name in INPUT_FIELDS if name in usage]
        tokens_in = sum(n for n in inputs if n is not None) if inputs and None not in inputs else None
        return Usage(tokens_in, count(usage.get("output_tokens")))

    def reply(self, obj: Any) -> str:
        if dig(obj, "type") == "content_block_delta":
            delta = obj.get("delta") or {}
            return next((delta[k] for k in ("text", "partial_json", "thinking") if isinstance(delta.get(k), str)), "")
        if dig(obj, "type") == "content_block_start":
            return _block_text(dig(obj, "content_block"))
        return "".join(_block_text(block) for block in (dig(obj, "content") or []))


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    if isinstance(block.get("text"), str):
        return block["text"]
    if block.get("type") == "tool_use":
        arguments = json.dumps(block["input"]) if block.get("input") else ""
        return f"[tool call {block.get('name')}] {arguments}"
    return ""

"""Google's Gemini API (generativelanguage): the model is in the path (`/v1beta/models/NAME:generateContent`),
the key goes upstream as `x-goog-api-key`, and usage is `usageMetadata` (thinking tokens count as
output). A stream with `alt=sse` is server-sent events; without it, one JSON array of the chunks."""

from __future__ import annotations

import re
from typing import Any

from runner.gateway.providers.base import Provider, Usage, count, dig, texts

MODEL_IN_PATH = re.compile(r"/models/([^/:]+)")


class Gemini(Provider):
    name = "gemini"
    key_names = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    base_url_vars = ("GEMINI_API_BASE", "GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL")
    prompt_fields = ("systemInstruction", "system_instruction", "contents")

    def auth_headers(self, key_name: str, key: str) -> list[tuple[str, str]]:
        return [("x-goog-api-key", key)]

    def model(self, path: str, body: dict | None) -> str:
        found = MODEL_IN_PATH.search(path)
        return found.group(1) if found else super().model(path, body)

    def usage(self, obj: Any) -> Usage | None:
        if isinstance(obj, list):  # a non-SSE stream: the last chunk's (cumulative) counts
            found = [u for u in map(self.usage, obj) if u is not None]
            return found[-1] if found else None
        usage = dig(obj, "usageMetadata")
        if not isinstance(usage, dict):
            return None
        candidates, thoughts = count(usage.get("candidatesTokenCount")), count(usage.get("thoughtsTokenCount"))
        tokens_out = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
        return Usage(count(usage.get("promptTokenCount")), tokens_out)

    def reply(self, obj: Any) -> str:
        if isinstance(obj, list):
            return "".join(map(self.reply, obj))
        return texts(dig(obj, "candidates", 0, "content", "parts"), "text")

"""The one interface every LLM provider behind the gateway implements.

A provider says which job secrets are its keys, which variables its SDKs read for their base URL,
how the real key goes upstream, and how to read the model, the prompt, the reply and the token usage
out of its own JSON (a whole response, or one server-sent event of a stream). Everything else (the
HTTP proxying, the token check, limits, records) is the gateway's and the same for all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass
class Usage:
    """Tokens as the upstream counted them; None where it has not said (yet)."""

    tokens_in: int | None = None
    tokens_out: int | None = None

    def update(self, other: Usage | None) -> None:
        """Take the newer counts: streams repeat (cumulative) counts, and a later event's are the total."""
        if other is None:
            return
        if other.tokens_in is not None:
            self.tokens_in = other.tokens_in
        if other.tokens_out is not None:
            self.tokens_out = other.tokens_out

    @property
    def known(self) -> bool:
        return self.tokens_in is not None or self.tokens_out is not None


class Provider:
    name: ClassVar[str]  # the path prefix in the sandbox (/openai/...) and the key in MEDALBOARD_LLM_UPSTREAMS
    key_names: ClassVar[tuple[str, ...]] = ()  # job secrets that hold this provider's key
    base_url_vars: ClassVar[tuple[str, ...]] = ()  # variables the SDKs (and litellm) read for the base URL
    sdk_suffix: ClassVar[str] = ""  # what the SDK's base URL ends with beyond the upstream's root, e.g. "/v1"
    prompt_fields: ClassVar[tuple[str, ...]] = ()  # request fields that carry the prompt

    def auth_headers(self, key_name: str, key: str) -> list[tuple[str, str]]:
        """The upstream's credential header(s) for the real key (from the job secret `key_name`)."""
        return [("authorization", f"Bearer {key}")]

    def prepare(self, path: str, body: dict) -> bool:
        """Adjust a JSON request body in place before it goes upstream; True if it changed."""
        return False

    def added_by_gateway(self, event: Any) -> bool:
        """Whether a stream event exists only because prepare() asked for it (then the client does not get it)."""
        return False

    def model(self, path: str, body: dict | None) -> str:
        return str(body.get("model") or "") if isinstance(body, dict) else ""

    def prompt(self, body: dict | None) -> dict:
        if not isinstance(body, dict):
            return {}
        return {name: body[name] for name in self.prompt_fields if name in body}

    def usage(self, obj: Any) -> Usage | None:
        """The usage a whole response or one stream event carries, if any."""
        raise NotImplementedError

    def reply(self, obj: Any) -> str:
        """The reply text a whole response or one stream event carries ("" if none)."""
        raise NotImplementedError


def count(value: Any) -> int | None:
    """A token count as the upstream wrote it, or None for anything that is not a whole number >= 0."""
    return value if type(value) is int and value >= 0 else None


def dig(obj: Any, *path: Any) -> Any:
    """obj[path[0]][path[1]]... or None where any step is missing or of the wrong type."""
    for part in path:
        if isinstance(part, int):
            if not isinstance(obj, list) or len(obj) <= part:
                return None
        elif not isinstance(obj, dict):
            return None
        obj = obj[part] if isinstance(part, int) else obj.get(part)
    return obj


def texts(items: Any, *keys: str) -> str:
    """The string values under any of `keys` in a list of objects, concatenated."""
    if not isinstance(items, list):
        return ""
    out = []
    for item in items:
        for key in keys:
            value = item.get(key) if isinstance(item, dict) else None
            if isinstance(value, str):
                out.append(value)
    return "".join(out)

"""Provider keys stay on the runner: the sandbox gets a per-run token in their place.

    sandbox_env, keys = split_secrets(job_secrets)

Every job secret named like a provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, ...)
is taken out of the sandbox's environment and replaced by the run's token, a random value that only
this run's gateway accepts, while it runs; the real key goes upstream only. Other secrets pass as they
are. The token is accepted wherever an SDK sends a key (Authorization: Bearer, x-api-key,
x-goog-api-key, api-key, or a `key=` query parameter) and every one of those is removed from what goes
upstream, so only the key the gateway adds reaches the provider.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

from runner.gateway.providers import provider_for_key

TOKEN_PREFIX = "medalboard-run-"
TOKEN_VARIABLE = "MEDALBOARD_GATEWAY_TOKEN"  # also given to the sandbox, for agents that call the gateway directly
CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key", "proxy-authorization"})
CREDENTIAL_QUERY = "key"


@dataclass(frozen=True)
class RunKeys:
    token: str
    by_provider: dict[str, tuple[str, str]] = field(default_factory=dict)  # provider -> (secret name, real key)

    def for_provider(self, name: str) -> tuple[str, str] | None:
        return self.by_provider.get(name)

    def real_keys(self) -> list[str]:
        return [key for _, key in self.by_provider.values()]

    def accepts(self, presented: str | None) -> bool:
        return presented is not None and hmac.compare_digest(presented.encode(), self.token.encode())


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def split_secrets(env: dict[str, str]) -> tuple[dict[str, str], RunKeys]:
    """The sandbox's environment (provider keys replaced by the run's token) and the keys the gateway holds."""
    token = new_token()
    sandbox_env, by_provider = {TOKEN_VARIABLE: token}, {}
    for name, value in env.items():
        provider = provider_for_key(name)
        if provider is None:
            sandbox_env[name] = value
            continue
        sandbox_env[name] = token
        if value and provider.name not in by_provider:  # the first of a provider's names given wins
            by_provider[provider.name] = (name, value)
    return sandbox_env, RunKeys(token, by_provider)


def presented_token(headers: list[tuple[str, str]], query: str) -> str | None:
    """The credential the client sent, wherever its SDK puts one."""
    for name, value in headers:
        if name in CREDENTIAL_HEADERS and name != "proxy-authorization":
            scheme, _, rest = value.partition(" ")
            return rest.strip() if name == "authorization" and scheme.lower() == "bearer" else value.strip()
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name == CREDENTIAL_QUERY:
            return value
    return None


def without_credentials(query: str) -> str:
    """The query string with any `key=` parameter removed (the real key goes in a header instead)."""
    if CREDENTIAL_QUERY + "=" not in query:
        return query
    return urlencode([(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != CREDENTIAL_QUERY])


class Scrubber:
    """Replaces the real keys in bytes going back to the sandbox, across chunk boundaries: a chunk's
    tail that could be the start of a key is held until the next chunk (an SSE chunk ends in a blank
    line, so in practice nothing is held)."""

    MASK = b"[key removed by the gateway]"

    def __init__(self, keys: list[str]) -> None:
        self.keys = sorted({k.encode() for k in keys if k}, key=len, reverse=True)
        self.held = b""

    def feed(self, chunk: bytes) -> bytes:
        if not self.keys:
            return chunk
        data = self.held + chunk
        for key in self.keys:
            data = data.replace(key, self.MASK)
        cut = self._partial_tail(data)
        self.held = data[len(data) - cut:] if cut else b""
        return data[:len(data) - cut] if cut else data

    def flush(self) -> bytes:
        held, self.held = self.held, b""
        return held

    def _partial_tail(self, data: bytes) -> int:
        """The length of the longest tail of `data` that is a proper prefix of some key."""
        best = 0
        for key in self.keys:
            at = data.find(key[:1], max(0, len(data) - len(key) + 1))
            while at != -1 and len(data) - at > best:
                if key.startswith(data[at:]):
                    best = len(data) - at
                    break
                at = data.find(key[:1], at + 1)
        return best

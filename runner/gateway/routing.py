"""Which requests the gateway serves, and what goes upstream in their place.

Only `/<provider>/<the SDK's path>` on the loopback host, with the run's token, to a provider that has
an upstream: the gateway is not a general proxy. An absolute-form target (`GET http://elsewhere/`),
CONNECT, a Host naming another machine, a dot segment, an unknown provider: each refused with a 4xx
that says why. What goes upstream carries the client's headers less hop-by-hop ones and every
credential, plus the provider's real key; what comes back carries the upstream's headers less
hop-by-hop ones, cookies and anything holding a key.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import h11

from runner.gateway.keys import CREDENTIAL_HEADERS, RunKeys, presented_token, without_credentials
from runner.gateway.providers import PROVIDERS, Provider

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "trailers", "transfer-encoding", "upgrade", "proxy-connection"})
NOT_UPSTREAM = HOP_BY_HOP | CREDENTIAL_HEADERS | {"host", "content-length", "accept-encoding", "cookie",
                                                  "expect", "forwarded", "x-forwarded-for", "x-real-ip"}
NOT_DOWNSTREAM = HOP_BY_HOP | {"content-length", "content-encoding", "set-cookie", "set-cookie2", "alt-svc"}


class Refused(Exception):
    """A request the gateway answers itself: status, message, error type, and whether it is recorded."""

    def __init__(self, status: int, message: str, kind: str = "medalboard_gateway", record: bool = True,
                 limit: str = "") -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.record, self.limit = status, message, kind, record, limit


@dataclass
class Route:
    provider: Provider
    path: str  # the SDK's path, beneath the provider's base URL, e.g. /chat/completions
    url: str  # upstream URL with the query, credentials removed


def route(request: h11.Request, keys: RunKeys, upstreams: dict[str, str]) -> Route:
    """The upstream for this request, or Refused."""
    method, target = request.method.decode("latin-1").upper(), request.target.decode("latin-1")
    if method == "CONNECT":
        raise Refused(405, "CONNECT is refused: the LLM gateway is not a proxy", record=False)
    if not target.startswith("/") or target.startswith("//"):
        raise Refused(400, "only paths of the form /<provider>/... are served: the LLM gateway is not a proxy",
                      record=False)
    headers = _headers(request)
    _check_host(headers)
    raw_path, _, query = target.partition("?")
    if not keys.accepts(presented_token(headers, query)):
        raise Refused(401, "missing or wrong token: use the API key the sandbox was given (its provider's "
                      "*_API_KEY variable)", kind="medalboard_auth")
    provider, path = _provider_path(raw_path)
    if provider.name not in upstreams:
        raise Refused(503, f"no LLM is reachable from this runner: it has no upstream for {provider.name} "
                      "(MEDALBOARD_LLM_UPSTREAMS)", kind="medalboard_no_upstream")
    query = without_credentials(query)
    base = upstreams[provider.name].rstrip("/")
    url = base + path + (f"?{query}" if query else "")
    if not _beneath(url, base):
        raise Refused(400, "this path would leave the provider's upstream")
    return Route(provider, path, url)


def _beneath(url: str, base: str) -> bool:
    """Whether `url` has `base`'s scheme and host and lies under its path (however the path was spelled)."""
    target, root = urlsplit(url), urlsplit(base)
    return (target.scheme, target.netloc) == (root.scheme, root.netloc) and (
        target.path == root.path or target.path.startswith(root.path.rstrip("/") + "/"))


def _headers(request: h11.Request) -> list[tuple[str, str]]:
    return [(name.decode("latin-1").lower(), value.decode("latin-1")) for name, value in request.headers]


def _check_host(headers: list[tuple[str, str]]) -> None:
    host = next((value for name, value in headers if name == "host"), "")
    try:
        hostname = urlsplit(f"//{host}").hostname if host else ""
    except ValueError:
        hostname = None
    if host and hostname not in LOOPBACK_HOSTS:
        raise Refused(421, f"Host {host[:100]!r} is not this gateway: only the configured LLM upstreams are "
                      "reachable", record=False)


def _provider_path(raw_path: str) -> tuple[Provider, str]:
    segments = raw_path.split("/")
    if any(unquote(s) in (".", "..") or "\\" in unquote(s) or "/" in unquote(s) for s in segments):
        raise Refused(400, "dot segments and encoded slashes are refused in gateway paths")
    name = segments[1] if len(segments) > 1 else ""
    provider = PROVIDERS.get(name)
    if provider is None:
        raise Refused(404, f"unknown provider {name[:50]!r}; this gateway serves "
                      f"{', '.join('/' + p for p in PROVIDERS)}")
    path = raw_path[len(name) + 1:]
    suffix = provider.sdk_suffix
    if suffix and not (path == suffix or path.startswith(suffix + "/")):
        raise Refused(404, f"{provider.name} is served under /{provider.name}{suffix}/ (the SDK's base URL)")
    return provider, path[len(suffix):]


def upstream_headers(request: h11.Request, provider: Provider, key: tuple[str, str] | None) -> list[tuple[str, str]]:
    headers = _headers(request)
    dropped = NOT_UPSTREAM | _connection_tokens(headers)
    kept = [(name, value) for name, value in headers if name not in dropped]
    kept.append(("accept-encoding", "identity"))  # the gateway reads the usage as the bytes pass
    return kept + (provider.auth_headers(*key) if key else [])


def downstream_headers(headers: list[tuple[str, str]], real_keys: list[str]) -> list[tuple[str, str]]:
    dropped = NOT_DOWNSTREAM | _connection_tokens(headers)
    return [(name, value) for name, value in headers
            if name not in dropped and not any(key in value for key in real_keys)]


def _connection_tokens(headers: list[tuple[str, str]]) -> set[str]:
    """Headers the Connection header names as hop-by-hop."""
    return {token.strip().lower() for name, value in headers if name == "connection" for token in value.split(",")}

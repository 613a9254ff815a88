"""Where the upstreams are (the runner's settings) and what the sandbox is told (environment()).

MEDALBOARD_LLM_UPSTREAMS="openai=https://api.openai.com/v1,anthropic=https://api.anthropic.com"
names, per provider, the URL its SDK would take as base URL; the site's settings (webapp/settings.py)
and a remote runner's (runner/remote/settings.py) parse it into settings.LLM_UPSTREAMS with
`parse_upstreams`. A provider absent there is answered 503: no LLM of it is reachable from this runner.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from runner.gateway.providers import PROVIDERS

SANDBOX_PORT = 8787  # the forwarder's port inside the sandbox (loopback works under network none)
SANDBOX_SOCKET = "/run/medalboard/gateway.sock"  # where the runner's socket is mounted in the sandbox
GATEWAY_URL_VARIABLE = "MEDALBOARD_GATEWAY_URL"


def parse_upstreams(name: str, items: list[str]) -> dict[str, str]:
    """`provider=URL` items (of the variable `name`) as {provider: URL}; each URL an http(s) base URL
    without query or credentials."""
    upstreams: dict[str, str] = {}
    for item in items:
        provider, _, url = (part.strip() for part in item.partition("="))
        parts = urlsplit(url)
        if not provider or parts.scheme not in ("http", "https") or not parts.hostname or parts.query \
                or parts.fragment or parts.username or parts.password:
            raise ImproperlyConfigured(f"{name}: {item!r} is not provider=http(s)://host/base-path "
                                       "(no query, fragment or credentials)")
        if provider.lower() in upstreams:
            raise ImproperlyConfigured(f"{name} names {provider!r} twice")
        upstreams[provider.lower()] = url.rstrip("/")
    return upstreams


def configured_upstreams() -> dict[str, str]:
    """settings.LLM_UPSTREAMS, its provider names checked against the registry."""
    upstreams = dict(getattr(settings, "LLM_UPSTREAMS", {}) or {})
    unknown = sorted(set(upstreams) - set(PROVIDERS))
    if unknown:
        raise ImproperlyConfigured(f"MEDALBOARD_LLM_UPSTREAMS names unknown provider(s) {', '.join(unknown)}; "
                                   f"known: {', '.join(sorted(PROVIDERS))}")
    return upstreams


def environment(port: int, host: str = "127.0.0.1") -> dict[str, str]:
    """The variables that point every provider's SDK (and litellm) at the gateway on `port`."""
    root = f"http://{host}:{port}"
    env = {GATEWAY_URL_VARIABLE: root, "NO_PROXY": f"{host},localhost", "no_proxy": f"{host},localhost"}
    for provider in PROVIDERS.values():
        for variable in provider.base_url_vars:
            env[variable] = f"{root}/{provider.name}{provider.sdk_suffix}"
    return env

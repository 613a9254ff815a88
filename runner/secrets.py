"""Secrets such as LLM API keys: encrypted at rest, decrypted only into a sandbox's environment.

The key comes from the environment (MEDALBOARD_SECRETS_KEY, a Fernet key:
`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`). In
DEBUG without one, a key is derived from SECRET_KEY so a laptop works out of the box; production
refuses to store or read a secret without its own key. A value is never rendered, serialized or
logged: pages and the API show secret names only.
"""

from __future__ import annotations

import base64
import hashlib
import json

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class SecretError(Exception):
    """A secret cannot be stored or read; the message says why without the value."""


def _fernet() -> Fernet:
    key = getattr(settings, "SECRETS_KEY", "")
    if not key:
        if not settings.DEBUG:
            raise ImproperlyConfigured("MEDALBOARD_SECRETS_KEY must be set to store or use secrets")
        digest = hashlib.sha256(b"medalboard-secrets\0" + settings.SECRET_KEY.encode()).digest()
        key = base64.urlsafe_b64encode(digest).decode()
    try:
        return Fernet(key)
    except (ValueError, TypeError):
        raise ImproperlyConfigured("MEDALBOARD_SECRETS_KEY is not a Fernet key (32 url-safe base64 bytes)") from None


def encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise SecretError("a stored secret cannot be decrypted with the current MEDALBOARD_SECRETS_KEY") from None


def seal(env: dict[str, str]) -> str:
    """A sandbox environment (names -> secret values) as one encrypted token, for a Job row."""
    return encrypt(json.dumps(env, sort_keys=True))


def unseal(token: str) -> dict[str, str]:
    """The environment `seal` stored; empty for an empty token. Only the runner calls this."""
    return json.loads(decrypt(token)) if token else {}


def redact(text: str, env: dict[str, str]) -> str:
    """`text` with every secret value replaced, for errors and log tails that might echo one."""
    for value in sorted((v for v in env.values() if len(v) >= 4), key=len, reverse=True):
        text = text.replace(value, "[secret]")
    return text

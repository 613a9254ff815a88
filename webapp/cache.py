"""The shared cache (MEDALBOARD_CACHE_URL=redis://...) as something the site can lose.

Everything kept in it can be recomputed or forgotten: cached leaderboards and counts, throttle and
failed-login counters. So when Redis is unreachable a read is a miss and a write is dropped; the
page is computed instead of failing. The first failure is logged with the reason and the cache is
then left alone for RETRY_S (no connect attempt per request while it is down); every failed or
skipped call is counted in `counts`. Throttles fail open meanwhile (README, Configuration).
"""

from __future__ import annotations

import logging
import threading
import time

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

log = logging.getLogger(__name__)
RETRY_S = 5.0
counts = {"failures": 0, "skipped": 0, "outages": 0}  # this process's


class _Breaker:
    """Open (calls skipped) for RETRY_S after a failure; one line in the log per outage."""

    def __init__(self) -> None:
        self.down_until = 0.0
        self.down = False
        self.lock = threading.Lock()

    def is_open(self) -> bool:
        return time.monotonic() < self.down_until

    def failed(self, location: str, exc: Exception) -> None:
        with self.lock:
            counts["failures"] += 1
            self.down_until = time.monotonic() + RETRY_S
            if not self.down:
                self.down = True
                counts["outages"] += 1
                log.warning("cache %s unreachable (%s: %s): computing answers without it, retrying every %g s",
                            location, exc.__class__.__name__, exc, RETRY_S)

    def succeeded(self, location: str) -> None:
        if self.down:
            with self.lock:
                if self.down:
                    self.down = False
                    log.warning("cache %s reachable again after %d failed calls", location, counts["failures"])


_MISSING = object()


class FailSafeRedisCacheClient(RedisCacheClient):
    """Django's Redis client whose calls degrade to a miss / no-op while Redis cannot be reached."""

    def __init__(self, servers, **options) -> None:
        super().__init__(servers, **options)
        self._location = ",".join(_redacted(s) for s in servers)
        self._breaker = _Breaker()

    def _guard(self, fallback, call, *args):
        if self._breaker.is_open():
            counts["skipped"] += 1
            return _fail(fallback)
        try:
            result = call(*args)
        except (RedisError, OSError) as exc:
            self._breaker.failed(self._location, exc)
            return _fail(fallback)
        self._breaker.succeeded(self._location)
        return result

    def add(self, key, value, timeout):
        return self._guard(False, super().add, key, value, timeout)

    def get(self, key, default):
        return self._guard(default, super().get, key, default)

    def set(self, key, value, timeout):
        return self._guard(None, super().set, key, value, timeout)

    def touch(self, key, timeout):
        return self._guard(False, super().touch, key, timeout)

    def delete(self, key):
        return self._guard(False, super().delete, key)

    def get_many(self, keys):
        return self._guard({}, super().get_many, keys)

    def has_key(self, key):
        return self._guard(False, super().has_key, key)

    def incr(self, key, delta):
        # A counter that cannot be read is treated as absent, which is what callers of incr handle.
        return self._guard(ValueError(f"cache key {key!r} unavailable"), super().incr, key, delta)

    def set_many(self, data, timeout):
        return self._guard([], super().set_many, data, timeout)

    def delete_many(self, keys):
        return self._guard(None, super().delete_many, keys)

    def clear(self):
        return self._guard(False, super().clear)


def _fail(fallback):
    if isinstance(fallback, Exception):
        raise fallback
    return fallback


def _redacted(url: str) -> str:
    """The URL without a password, for the log."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.rsplit('@', 1)[1]}"
    return url


class FailSafeRedisCache(RedisCache):
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = FailSafeRedisCacheClient

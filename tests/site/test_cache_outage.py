"""A cache that is down (MEDALBOARD_CACHE_URL at a closed port) degrades to computing the answer:
no page or API answer fails, the outage is logged once and counted, throttles fail open."""

from __future__ import annotations

import logging
import time

import pytest

from tests.redis_support import RedisServer, free_port
from tests.site.url_support import real_urls
from webapp import cache as fail_safe


@pytest.fixture
def cache_down(settings):
    settings.CACHES = {"default": {"BACKEND": "webapp.cache.FailSafeRedisCache",
                                   "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
                                   "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}}}
    before = dict(fail_safe.counts)
    yield before


@pytest.mark.parametrize("url", ["/", "/api/leaderboard/", "/api/runs/", "/api/competitions/"])
def test_pages_are_computed_while_the_cache_is_down(client, catalogue, cache_down, caplog, url):
    with caplog.at_level(logging.WARNING, logger="webapp.cache"):
        response = client.get(url)
    assert response.status_code == 200
    assert fail_safe.counts["failures"] > cache_down["failures"]
    outage_lines = [r for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(outage_lines) == 1 and "Connection" in outage_lines[0].getMessage()


def test_the_cache_is_left_alone_for_a_while_after_a_failure(client, catalogue, cache_down):
    client.get("/api/runs/")
    failures = fail_safe.counts["failures"]
    for _ in range(5):
        assert client.get("/api/leaderboard/").status_code == 200
    assert fail_safe.counts["failures"] == failures  # skipped, not retried per call
    assert fail_safe.counts["skipped"] > cache_down["skipped"]


def test_throttles_fail_open_while_the_cache_is_down(client, catalogue, cache_down, settings, monkeypatch):
    from rest_framework.throttling import AnonRateThrottle

    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "2/min"})
    assert [client.get("/api/competitions/").status_code for _ in range(5)] == [200] * 5


def test_a_failed_login_while_the_cache_is_down_is_the_form_again(client, alice, cache_down):
    response = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert response.status_code == 200 and b"password" in response.content.lower()


def test_the_cache_is_used_again_once_redis_is_back(settings, monkeypatch):
    from django.core.cache import cache

    server = RedisServer().start()
    monkeypatch.setattr(fail_safe, "RETRY_S", 0.2)
    settings.CACHES = {"default": {"BACKEND": "webapp.cache.FailSafeRedisCache", "LOCATION": server.url}}
    try:
        cache.set("k", 1)
        assert cache.get("k") == 1
        server.stop()
        assert cache.get("k") is None and cache.add("other", 1) is False  # a miss, not an error
        server.start()  # empty again: the same port, a fresh server
        time.sleep(0.3)
        cache.set("k", 2)
        assert cache.get("k") == 2
    finally:
        server.stop()


def _statuses(client, urls: list[str]) -> dict[str, int]:
    return {url: client.get(url).status_code for url in urls}


@pytest.mark.parametrize("signed_in", [False, True])
def test_every_page_answers_as_it_does_with_a_cache_while_the_cache_is_down(site_world, client, alice, settings,
                                                                             signed_in):
    """Each URL of the site (pages and API, the run page and login included) with real ids: the same
    answer with Redis down as with a working cache, never a server error."""
    if signed_in:
        client.force_login(alice)
    urls = real_urls(site_world)
    assert any(url == f"/runs/{site_world['run'].pk}/" for url in urls) and "/accounts/login/" in urls
    working = _statuses(client, urls)
    assert working[f"/runs/{site_world['run'].pk}/"] == 200 and working["/"] == 200
    before = fail_safe.counts["failures"] + fail_safe.counts["skipped"]
    settings.CACHES = {"default": {"BACKEND": "webapp.cache.FailSafeRedisCache",
                                   "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
                                   "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}}}
    down = _statuses(client, urls)
    assert {u: s for u, s in down.items() if s != working[u] or s >= 500} == {}
    assert fail_safe.counts["failures"] + fail_safe.counts["skipped"] > before  # the pages did ask the cache


def test_signing_in_works_while_the_cache_is_down(client, alice, cache_down):
    response = client.post("/accounts/login/", {"username": "alice", "password": "alice-password-1"})
    assert response.status_code == 302
    assert client.get("/account/token/").status_code == 200

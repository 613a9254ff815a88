"""Every URL of the site, pages and API, with ids that are no ids in its path and numbers and strings
no column holds in every query parameter any view reads; every form a user can post with the same
values. None of it is a server error (on PostgreSQL, where an out-of-range value raises DataError).

The URLs come from the URL configuration itself, so a new page is probed without being listed here;
the parameter names are those of the OpenAPI schema and those the page views read."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from tests.api.test_runs import token_client
from tests.site.url_support import fill, placeholders, real_urls, real_values, routes

pytestmark = [pytest.mark.postgres]

# Path parameters: Django's int converter takes only ASCII digits, so past 64 bits is what is left;
# DRF's router ids take any text.
INT_IDS = ["0", str(2**31), str(2**63), str(2**64), "9" * 30]
TEXT_IDS = ["false", "null", "text", "-1", "1.5", "1e5", str(2**70), "\u00b2", "x" * 3000]
# Query values: past 64 bits, too long for any column, negative, not numbers, Unicode digits, infinity.
VALUES = [str(2**64), "9" * 5000, "-1", "abc", "\u00b2", "1e999", "NaN", "x" * 3000, "1,\u00b2,-3"]
# Each parameter alone: past 64 bits, and a digit to str.isdigit() that int() refuses.
ALONE = ["9" * 30, "1\u00b2"]
# What the page views read from the query string (leaderboard.web, runner.web.views); the API's come
# from its schema.
PAGE_PARAMETERS = ["page", "q", "split", "sort", "agent", "model", "hardware", "verified", "internet", "test_signal",
                   "leakage", "pad", "no_findings", "format", "export", "after", "before", "around", "type", "runs",
                   "align", "a", "b", "start", "status", "competition", "owner", "kind", "experiment", "seed"]


def _schema_parameters() -> set[str]:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return {p["name"] for item in schema["paths"].values() for op in item.values() if isinstance(op, dict)
            for p in op.get("parameters", []) if p.get("in") == "query"}


def _probe(client, url: str, failures: list[str], method: str = "get", data=None, **extra) -> None:
    """One request; a 5xx, or the exception the test client re-raises for one, is a failure."""
    call = getattr(client, method)
    try:
        response = call(url, data, **extra) if data is not None else call(url, **extra)
    except Exception as exc:  # noqa: BLE001 - the view's exception is what a server error is made of
        failures.append(f"{method.upper()} {url[:120]} {str(data)[:80]} -> {exc.__class__.__name__}: {str(exc)[:200]}")
        return
    if response.status_code >= 500:
        failures.append(f"{method.upper()} {url[:120]} {str(data)[:80]} -> {response.status_code}")


def test_every_path_with_ids_that_are_no_ids_is_never_a_server_error(site_world, client, alice):
    client.force_login(alice)
    failures: list[str] = []
    for route in routes():
        for converter, name in placeholders(route):
            for value in (TEXT_IDS if converter in ("text", "str", "slug", "path", "") else INT_IDS):
                url = fill(route, {**real_values(route, site_world), name: value})
                _probe(client, url, failures)
                _probe(client, url, failures, "post", {})
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("signed_in", [False, True])
def test_every_query_parameter_with_values_no_column_holds_is_never_a_server_error(site_world, client, alice,
                                                                                     signed_in):
    if signed_in:
        client.force_login(alice)
    parameters = sorted(_schema_parameters() | set(PAGE_PARAMETERS))
    failures: list[str] = []
    for route in routes():
        url = fill(route, real_values(route, site_world))
        for value in VALUES:  # every parameter at once
            _probe(client, url, failures, data={name: value for name in parameters})
        if not placeholders(route):  # a list: each parameter alone too (a refusal of one must not hide another)
            for name in parameters:
                for value in ALONE:
                    _probe(client, url, failures, data={name: value})
    assert not failures, "\n".join(failures[:50])


FORM_VALUES = {"seeds": str(2**64), "gpus": str(2**40), "time_limit_minutes": "1e999", "cpus": "inf",
               "memory_gb": "NaN", "seed": str(2**64), "gpu_count": str(2**40), "cpu_count": "9" * 30,
               "time_limit_hours": "Infinity", "model": "m" * 5000, "agent": "a" * 5000, "agent_version": "v" * 500,
               "hardware": "h" * 5000, "gpu_type": "g" * 5000, "split": "s" * 500, "competition": "9" * 30,
               "competitions": "\u00b2", "team": str(2**64), "network": "n" * 500, "task": "t" * 5000,
               "status": "x" * 500, "reason": "r" * 100_000, "username": "u" * 5000, "password1": "p" * 5000,
               "password2": "p" * 5000, "email": "e" * 5000 + "@example.org", "password": "p" * 5000,
               "notes": "n" * 100_000, "source_url": "https://" + "x" * 5000, "leakage_note": "l" * 50_000,
               "secrets": "A=" + "s" * 20_000, "private": "maybe", "is_private": "\u00b2", "settings": "{" * 5000}


def _as(persona: str, world, client, alice, staff):
    """(url, client) for every URL, the client signed in as the persona (a token for the API)."""
    user = {"alice": alice, "staff": staff}.get(persona)
    if user is not None:
        client.force_login(user)
    api = token_client(user) if user is not None else client
    return [(url, api if url.startswith("/api/") else client) for url in real_urls(world)]


@pytest.mark.parametrize("persona", ["anonymous", "alice", "staff"])
def test_every_form_posted_with_values_no_column_holds_is_never_a_server_error(site_world, client, alice, staff,
                                                                                 persona):
    """Form-encoded and multipart posts to every URL, pages and API alike (not only JSON)."""
    failures: list[str] = []
    for url, target in _as(persona, site_world, client, alice, staff):
        _probe(target, url, failures, "post", FORM_VALUES)  # multipart
        _probe(target, url, failures, "post", urlencode(FORM_VALUES), content_type="application/x-www-form-urlencoded")
    assert not failures, "\n".join(failures)


JSON_BODIES = [
    '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}",  # past the recursion limit
    json.dumps({name: 2**70 for name in FORM_VALUES}),  # integers no column holds, in every field
    json.dumps({name: 1e308 for name in FORM_VALUES}).replace("1e+308", "1e999"),  # a float past a double
    json.dumps({name: "x" * 5000 for name in FORM_VALUES}),
    json.dumps({**{name: [name] * 3 for name in FORM_VALUES}, "settings": {"a": [{"b": [1e300] * 3}]}}),
]


@pytest.mark.parametrize("persona", ["anonymous", "alice", "staff"])
def test_every_json_body_no_column_holds_is_never_a_server_error(site_world, client, alice, staff, persona):
    """POST, PUT and PATCH of JSON nested past the recursion limit, or with numbers and strings past
    every column, to every URL."""
    failures: list[str] = []
    for url, target in _as(persona, site_world, client, alice, staff):
        for body in JSON_BODIES:
            for method in ("post", "put", "patch"):
                _probe(target, url, failures, method, body, content_type="application/json")
    assert not failures, "\n".join(failures)

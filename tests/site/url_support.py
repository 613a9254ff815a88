"""Every URL the site serves, from its URL configuration, filled with real ids (no tests here).

Used by the tests that probe every page and API answer (hostile parameters, a cache outage): a new
page is covered without being listed anywhere."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.job_support import scripted_job
from tests.web.test_replay_page import add_messages, make_run

SKIPPED = ("admin/", "api/schema/", "api/docs/", "assets/", "accounts/logout/")
PLACEHOLDER = re.compile(r"<(?:(\w+):)?(\w+)>")


def _patterns(entries=None, prefix=""):
    for entry in entries if entries is not None else get_resolver().url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _patterns(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield route


def routes() -> list[str]:
    """Every route as `runs/<int:pk>/`; DRF's router ids (any text but / and .) as `<text:pk>`."""
    found = set()
    for route in _patterns():
        route = route.replace("^", "").replace("\\Z", "").replace("$", "")
        if route.startswith(SKIPPED) or ":format>" in route or "<format>" in route:
            continue
        found.add(re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<text:\1>", route).replace("\\.", "."))
    return sorted(found)


def placeholders(route: str) -> list[tuple[str, str]]:
    """(converter, name) of each path parameter."""
    return PLACEHOLDER.findall(route)


def fill(route: str, values: dict[str, str]) -> str:
    return "/" + PLACEHOLDER.sub(lambda m: values[m.group(2)], route)


@pytest.fixture
def site_world(job_world, alice, staff):
    """A job of alice's, her graded run with steps and a finding, a second run: real ids for every route."""
    from django.contrib.auth.models import Permission

    from leaderboard.models import Competition, Run
    from leaderboard.trust.models import Finding

    alice.user_permissions.add(Permission.objects.get(codename="submit_job"))
    job = scripted_job(alice)
    run = make_run(owner=alice, competition=Competition.objects.get(slug="spaceship-titanic"),
                   status=Run.Status.GRADED, score=0.5)
    add_messages(run, 3)
    other = make_run(owner=alice)
    finding = Finding.objects.create(run=run, check_name="answers-read", summary="read the answers")
    real = {"pk": str(run.pk), "other": str(other.pk), "reference": str(other.pk), "artifact_id": "1",
            "finding_id": str(finding.pk), "slug": "spaceship-titanic", "id": "spaceship-titanic", "kind": "time",
            "version": "1", "uidb64": "MQ", "token": "set-password", "path": "train.csv", "key": "output",
            "sha256": "0" * 64}
    return {"job": job, "run": run, "real": real}


def real_values(route: str, world) -> dict[str, str]:
    values = dict(world["real"])
    if route.startswith(("api/jobs/", "jobs/")):
        values["pk"] = str(world["job"].pk)
    elif route.startswith("api/experiments/") or route.startswith("experiments/"):
        values["pk"] = str(world["run"].experiment_id)
    return values


def real_urls(world) -> list[str]:
    return [fill(route, real_values(route, world)) for route in routes()]

"""Whole-site checks: every URL renders without a server error, and no URL serves private answers."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from leaderboard.models import Run
from tests.runs.test_submission import answers_for, submit

SECRET = "ANSWER-ONLY-TOKEN-7f3a9c"


def _patterns(resolver=None, prefix=""):
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            if route.startswith("admin/"):
                continue
            yield from _patterns(entry, route)
        elif isinstance(entry, URLPattern):
            yield route


def _concrete(route: str, run: Run) -> str | None:
    if "(?P<format>" in route or "<drf_format_suffix" in route:
        return None  # DRF's format-suffix twins of routes already covered
    route = route.replace("^", "").replace("$", "").replace("\\Z", "").replace("/?", "/")
    values = {"slug": "spaceship-titanic", "id": str(run.pk), "pk": str(run.pk)}
    if route.startswith("api/competitions/"):
        values["id"] = "spaceship-titanic"
    if route.startswith("experiments/"):
        values["pk"] = str(run.experiment_id)
    route = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values.get(m.group(1), "1"), route)
    route = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: values.get(m.group(1), "1"), route)
    return "/" + route


@pytest.fixture
def graded_run(alice, catalogue, tmp_path, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    path = answers_for(tmp_path, catalogue)
    # Test-set ids are public (the sample submission lists them); the labels are the secret.
    header, first, *rest = path.read_text().splitlines()
    path.write_text("\n".join([header, first.split(",")[0] + f",{SECRET}", *rest]) + "\n")
    _public_data_beside(path, catalogue.get(slug="spaceship-titanic"))
    from webapp.celery import app

    app.conf.task_always_eager = True
    try:
        run = submit(alice, notes="graded against registered answers")
    finally:
        app.conf.task_always_eager = False
    from leaderboard.runs.outcome import grade_stored_run

    grade_stored_run(run)
    run.refresh_from_db()
    assert run.status == Run.Status.GRADED and run.score == pytest.approx(39 / 40)  # the answers were read
    return run, path


def _public_data_beside(answers, competition) -> None:
    """A public data folder next to the answers, holding a link to them, as a careless import might."""
    public = answers.parent / "public"
    (public / "images").mkdir(parents=True)
    (public / "train.csv").write_text("PassengerId,Transported\n0001_01,True\n")
    (public / "answers-link.csv").symlink_to(answers)
    (public / "images" / "up.csv").symlink_to(answers)
    competition.public_data_dir = str(public)
    competition.save(update_fields=["public_data_dir"])


def _urls(run):
    urls = {_concrete(route, run) for route in _patterns()}
    urls.discard(None)
    data = "/competitions/spaceship-titanic/data/"
    extra = {"/?format=csv", "/?format=json", "/api/leaderboard/?format=csv", "/api/runs/?limit=5",
             f"/api/runs/{run.pk}/steps/?q=Transported", f"/compare/?runs={run.pk},{run.pk}",
             data + "train.csv", data + "images/", data + "answers-link.csv", data + "images/up.csv",
             data + "../answers.csv", data + "images/../../answers.csv", data + "%2e%2e/answers.csv",
             "/competitions/spaceship-titanic/?export=html"}
    return sorted(urls | extra)


@pytest.mark.parametrize("persona", ["anonymous", "alice", "staff"])
def test_every_url_renders_and_never_shows_answers(client, graded_run, persona, request):
    run, answers_path = graded_run
    if persona != "anonymous":
        client.force_login(request.getfixturevalue(persona))
    for url in _urls(run):
        response = client.get(url)
        assert response.status_code < 500, (url, response.status_code)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert SECRET.encode() not in body, url
        assert str(answers_path).encode() not in body, url
        assert str(answers_path.parent).encode() not in body, url


def test_answers_are_outside_every_served_folder(client, graded_run, settings):
    run, answers_path = graded_run
    for base in ("/static/", "/media/", "/"):
        for tail in (str(answers_path).lstrip("/"), f"../../..{answers_path}", "%2e%2e/" * 6 + str(answers_path)):
            response = client.get(base + tail)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            assert SECRET.encode() not in body, base + tail

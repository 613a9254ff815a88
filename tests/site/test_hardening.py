"""What a public site is expected to do: login throttling, no-store on token pages,
a strict Content-Security-Policy with no inline scripts, deleting through a POST confirm page,
oversized bodies refused before they are read, and no empty zip accepted as a run."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from django.core.cache import cache
from django.core.files.base import ContentFile

from leaderboard.models import Run
from leaderboard.runs.artifacts import UploadError
from tests.runs.test_submission import submit


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


def test_repeated_failed_logins_are_throttled(client, alice, settings):
    settings.LOGIN_FAILURES_ALLOWED = 5  # the default; the suite's settings raise it for other tests
    for _ in range(settings.LOGIN_FAILURES_ALLOWED):
        response = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
        assert response.status_code == 200
    refused = client.post("/accounts/login/", {"username": "alice", "password": "alice-password-1"})
    assert refused.status_code == 429 and b"Too many failed" in refused.content
    assert "_auth_user_id" not in client.session
    cache.clear()  # the window has passed
    assert client.post("/accounts/login/", {"username": "alice", "password": "alice-password-1"}).status_code == 302


def test_the_token_page_is_never_stored(client, alice):
    client.force_login(alice)
    response = client.get("/account/token/")
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]


def test_pages_send_a_strict_content_security_policy(client, catalogue):
    policy = client.get("/")["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if d.strip())
    assert directives["script-src"] == "'self'" and directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'" and "default-src" in directives


INLINE_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.I)


def test_no_page_has_an_inline_script_or_handler(client, alice, catalogue):
    run = submit(alice, self_reported_score=0.5, submission=None)
    other = submit(alice, self_reported_score=0.4, submission=None, agent_name="other")
    client.force_login(alice)
    urls = ["/", "/competitions/", "/competitions/spaceship-titanic/", f"/runs/{run.pk}/",
            f"/experiments/{run.experiment_id}/", "/runs/upload/", f"/runs/{run.pk}/edit/",
            f"/runs/{run.pk}/delete/", f"/runs/{run.pk}/progress/", "/account/token/", "/api/docs/",
            f"/compare/experiments/?a={run.experiment_id}&b={other.experiment_id}&split=dev",
            f"/compare/?runs={run.pk},{other.pk}", "/accounts/login/", "/admin/login/"]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert not INLINE_HANDLER.search(html), (url, INLINE_HANDLER.search(html).group(0))
        assert not INLINE_SCRIPT.search(html), (url, INLINE_SCRIPT.search(html).group(0))


def test_deleting_a_run_goes_through_a_confirm_page_and_a_post(client, alice, bob, catalogue):
    run = submit(alice, self_reported_score=0.5, submission=None)
    client.force_login(alice)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f'href="/runs/{run.pk}/delete/"' in page
    confirm = client.get(f"/runs/{run.pk}/delete/")
    assert confirm.status_code == 200
    assert re.search(rf'<form method="post" action="/runs/{run.pk}/delete/"', confirm.content.decode())
    assert Run.objects.filter(pk=run.pk).exists()
    client.force_login(bob)
    assert client.get(f"/runs/{run.pk}/delete/").status_code in (403, 404)
    assert client.post(f"/runs/{run.pk}/delete/").status_code in (403, 404)
    client.force_login(alice)
    assert client.post(f"/runs/{run.pk}/delete/").status_code == 302
    assert not Run.objects.filter(pk=run.pk).exists()


class _Untouchable(io.BytesIO):
    def read(self, *args):
        raise AssertionError("the body was read")

    readline = read


def test_an_oversized_body_is_refused_before_it_is_read(client, alice, settings):
    settings.MAX_UPLOAD_BYTES = 1000
    client.force_login(alice)
    response = client.generic("POST", "/api/runs/", b"", CONTENT_TYPE="multipart/form-data; boundary=x",
                              CONTENT_LENGTH=str(10**9), **{"wsgi.input": _Untouchable()})
    assert response.status_code == 413 and "limit" in response.json()["detail"]
    response = client.generic("POST", "/runs/upload/", b"", CONTENT_TYPE="multipart/form-data; boundary=x",
                              CONTENT_LENGTH=str(10**9), **{"wsgi.input": _Untouchable()})
    assert response.status_code == 413


def test_an_empty_zip_is_not_a_run(alice, catalogue):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("run/", b"")  # a folder and nothing in it
    with pytest.raises(UploadError, match="no files"):
        submit(alice, submission=ContentFile(buffer.getvalue(), name="run.zip"))
    empty = io.BytesIO()
    zipfile.ZipFile(empty, "w").close()
    with pytest.raises(UploadError, match="no files"):
        submit(alice, submission=ContentFile(empty.getvalue(), name="run.zip"))
    assert not Run.objects.exists()

"""Sign-up, API tokens, and who may see, edit and delete a run (owner alice, other user bob, anonymous)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from rest_framework.authtoken.models import Token

from leaderboard.models import Run
from tests.runs.test_submission import submit


def test_signup_creates_an_account_and_logs_in(client, db):
    response = client.post("/accounts/signup/", {
        "username": "carol", "email": "carol@example.org",
        "password1": "a-long-passphrase-42", "password2": "a-long-passphrase-42",
    })
    assert response.status_code == 302
    assert get_user_model().objects.filter(username="carol").exists()
    assert client.get("/account/token/").status_code == 200  # logged in


def test_signup_rejects_a_mismatched_password(client, db):
    response = client.post("/accounts/signup/", {"username": "dave", "password1": "x-long-pass-1",
                                                 "password2": "other-pass-2"})
    assert response.status_code == 200 and not get_user_model().objects.filter(username="dave").exists()


def test_pages_link_to_signup(client, db):
    assert b"/accounts/signup/" in client.get("/competitions/").content


def test_token_page(client, alice, catalogue):
    assert client.get("/account/token/").status_code == 302  # anonymous: log in first
    client.force_login(alice)
    assert b"no API token yet" in client.get("/account/token/").content
    client.post("/account/token/")
    first = Token.objects.get(user=alice).key
    assert first.encode() in client.get("/account/token/").content
    client.post("/account/token/")
    assert Token.objects.get(user=alice).key != first  # replaced: the old one stops working


def test_owner_edits_notes_and_privacy(client, alice, catalogue):
    run = submit(alice)
    client.force_login(alice)
    assert client.get(f"/runs/{run.pk}/edit/").status_code == 200
    response = client.post(f"/runs/{run.pk}/edit/", {"notes": "tuned", "is_private": "on"})
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.notes == "tuned" and run.is_private


def test_other_users_and_anonymous_cannot_edit_or_delete(client, alice, bob, catalogue):
    run = submit(alice)
    assert client.post(f"/runs/{run.pk}/edit/", {"notes": "x"}).status_code == 302  # to the login page
    client.force_login(bob)
    assert client.get(f"/runs/{run.pk}/edit/").status_code == 403
    assert client.post(f"/runs/{run.pk}/edit/", {"notes": "x"}).status_code == 403
    assert client.post(f"/runs/{run.pk}/delete/").status_code == 403
    run.refresh_from_db()
    assert run.notes == "" and Run.objects.filter(pk=run.pk).exists()


def test_private_runs_are_hidden_from_others(client, alice, bob, catalogue):
    run = submit(alice, is_private=True)
    assert client.get(f"/runs/{run.pk}/status.json").status_code == 404
    client.force_login(bob)
    assert client.get(f"/runs/{run.pk}/status.json").status_code == 404
    assert client.get(f"/runs/{run.pk}/edit/").status_code == 404
    client.force_login(alice)
    assert client.get(f"/runs/{run.pk}/status.json").status_code == 200


def test_staff_can_edit_and_owner_can_delete_with_files(client, alice, staff, catalogue,
                                                       django_capture_on_commit_callbacks):
    run = submit(alice, is_private=True)
    client.force_login(staff)
    assert client.post(f"/runs/{run.pk}/edit/", {"notes": "checked"}).status_code == 302
    files = [a.file.name for a in run.artifacts.all()]
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/runs/{run.pk}/delete/").status_code == 302
    assert not Run.objects.filter(pk=run.pk).exists()
    assert files and not any(default_storage.exists(name) for name in files)


def test_edit_links_only_for_the_owner(client, alice, bob, catalogue):
    run = submit(alice)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.GRADED)
    url = f"/experiments/{run.experiment_id}/"
    client.force_login(bob)
    assert f"/runs/{run.pk}/edit/".encode() not in client.get(url).content
    client.force_login(alice)
    assert f"/runs/{run.pk}/edit/".encode() in client.get(url).content

"""Idempotence is a database constraint: the same upload twice, even at the same moment, is one run;
a repeat with other metadata updates it or says why not."""

from __future__ import annotations

import threading

import pytest
from django.db import IntegrityError, connection, transaction

from leaderboard.models import Run
from tests.api.test_runs import payload, token_client
from tests.runs.test_submission import submit


def test_the_database_refuses_a_second_run_with_the_same_content(alice, catalogue):
    run = submit(alice)
    twin = Run(experiment=run.experiment, competition=run.competition, seed=0, owner=alice,
               content_hash=run.content_hash)
    with pytest.raises(IntegrityError), transaction.atomic():
        twin.save()
    Run.objects.create(experiment=run.experiment, seed=1, content_hash="")  # CLI rows without a hash are fine
    Run.objects.create(experiment=run.experiment, seed=2, content_hash="")


def test_an_upload_that_loses_the_race_returns_the_winners_run(alice, catalogue, monkeypatch):
    """The check before inserting saw nothing; the insert hits the constraint: the answer is the run
    that won, and nothing of the loser is left."""
    first = submit(alice)
    real_filter = Run.objects.filter
    calls = {"n": 0}

    def blind_first_lookup(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1 and "content_hash" in kwargs:
            return real_filter(pk=-1)  # as if the other upload had not committed yet
        return real_filter(*args, **kwargs)

    monkeypatch.setattr(Run.objects, "filter", blind_first_lookup)
    again = submit(alice)
    assert again.pk == first.pk and Run.objects.count() == 1


def test_a_repeat_marked_private_makes_the_run_private(alice, bob, catalogue):
    client = token_client(alice)
    first = client.post("/api/runs/", payload(), format="multipart").json()
    assert first["is_private"] is False
    again = client.post("/api/runs/", payload(is_private=True), format="multipart")
    assert again.status_code == 200 and again.json()["id"] == first["id"]
    assert again.json()["is_private"] is True and "now private" in again.json()["detail"]
    assert Run.objects.get().is_private
    assert token_client(bob).get(f"/api/runs/{first['id']}/").status_code == 404


def test_a_repeat_without_the_flag_keeps_a_private_run_private_and_says_so(alice, catalogue):
    client = token_client(alice)
    client.post("/api/runs/", payload(is_private=True), format="multipart")
    again = client.post("/api/runs/", payload(notes="second try"), format="multipart")
    assert again.status_code == 200 and again.json()["is_private"] is True
    assert "stays private" in again.json()["detail"]
    assert Run.objects.get().notes == "second try"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_identical_uploads_at_the_same_moment_make_one_run(alice, catalogue):
    n = 6
    barrier, results, errors = threading.Barrier(n), [], []

    def upload():
        try:
            barrier.wait()
            results.append(submit(alice).pk)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=upload) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert Run.objects.count() == 1 and set(results) == {Run.objects.get().pk}

"""A snapshot stored while the broker was down is not left pending for ever: the sweep publishes its
grading again once it is stale, once per STALE_PENDING_S, and the grading then happens once."""

from __future__ import annotations

from datetime import timedelta

from django.core.files.base import ContentFile
from django.utils import timezone

from leaderboard import tasks
from leaderboard.models import Snapshot
from leaderboard.runs import recovery, snapshots
from tests.queue_support import broker_down, record_sends
from tests.runs.test_submission import answers_for, submission, submit
from webapp import queue


def test_a_snapshot_whose_grading_could_not_be_enqueued_is_graded_after_the_sweep(
    alice, catalogue, tmp_path, monkeypatch, settings, django_capture_on_commit_callbacks
):
    answers_for(tmp_path, catalogue)

    broker_down(monkeypatch)
    run = submit(alice)
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = snapshots.add_snapshot(run=run, elapsed_seconds=60, file=ContentFile(submission().read(),
                                                                                          name="s.csv"))
    assert Snapshot.objects.get(pk=snapshot.pk).status == Snapshot.Status.PENDING
    assert recovery.sweep_snapshots() == {"snapshots_requeued": 0}  # too fresh: its own enqueue may still come
    Snapshot.objects.filter(pk=snapshot.pk).update(
        created_at=timezone.now() - timedelta(seconds=settings.STALE_PENDING_S + 1))
    assert recovery.sweep_snapshots() == {"snapshots_requeued": 0}  # the broker is still down
    assert Snapshot.objects.get(pk=snapshot.pk).grading_enqueued_at is None
    sent = record_sends(monkeypatch, queue.GRADE_SNAPSHOT)  # the broker is back
    assert recovery.sweep_snapshots() == {"snapshots_requeued": 1} and sent == [snapshot.pk]
    assert recovery.sweep_snapshots() == {"snapshots_requeued": 0}  # published: not again until stale
    assert tasks.grade_snapshot.apply(args=[snapshot.pk]).get() == Snapshot.Status.GRADED
    assert tasks.grade_snapshot.apply(args=[snapshot.pk]).get() == "not pending"  # a repeat grades nothing
    Snapshot.objects.filter(pk=snapshot.pk).update(grading_enqueued_at=timezone.now() - timedelta(days=1))
    assert recovery.sweep_snapshots() == {"snapshots_requeued": 0}  # graded: never again

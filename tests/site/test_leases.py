"""The one lease machine (webapp.leases), on a model it knows only by the names it is given: claims
race and one owner wins, a fence after the lease was taken over writes nothing, a heartbeat keeps a
short lease alive past its length, release hands the row back, and the sweep counts attempts."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from leaderboard.models import RunIntake
from webapp import leases

LENGTH = {"s": 60.0}  # the lease length of the kind below; a test may shorten it
INTAKES = leases.Leased(RunIntake, "test intake", waiting=RunIntake.Status.RECEIVED,
                        working=RunIntake.Status.IMPORTING, failed=RunIntake.Status.FAILED,
                        lease_s=lambda: LENGTH["s"])


@pytest.fixture(autouse=True)
def _lease_length():
    yield
    LENGTH["s"] = 60.0


@pytest.fixture
def row(alice) -> RunIntake:
    return RunIntake.objects.create(owner=alice)


def state(row: RunIntake) -> RunIntake:
    return RunIntake.objects.get(pk=row.pk)


def expire(row: RunIntake) -> None:
    RunIntake.objects.filter(pk=row.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


def sweep(max_attempts: int = 3, then=None) -> dict[str, int]:
    return leases.sweep_expired(INTAKES, max_attempts=max_attempts, then=then,
                                retry=lambda r: {"error": f"attempt {r.attempts} lost; retrying"},
                                give_up=lambda r: {"error": f"lost {r.attempts} times; gave up"})


def test_a_claim_takes_a_waiting_row_once_with_an_owner_an_expiry_and_an_attempt(row):
    before = timezone.now()
    held = leases.claim(INTAKES, row.pk, "a")
    assert held == leases.Lease(INTAKES, row.pk, "a", attempt=1)
    assert leases.claim(INTAKES, row.pk, "b") is None  # held: nobody else gets it
    now = state(row)
    assert now.status == "importing" and now.lease_owner == "a" and now.attempts == 1
    assert before + timedelta(seconds=59) < now.lease_expires_at <= timezone.now() + timedelta(seconds=60)
    assert leases.claim(INTAKES, row.pk, where={"owner__username": "nobody"}) is None  # `where` narrows it


@pytest.mark.django_db(transaction=True)
def test_two_owners_claiming_at_once_one_wins(alice):
    """Each claimant in its own thread, so each has its own database connection and transaction."""
    for _ in range(5):
        row = RunIntake.objects.create(owner=alice)
        start, won = threading.Barrier(2), {}

        def take(owner: str, pk: int = row.pk, start=start, won=won) -> None:
            start.wait()
            try:
                won[owner] = leases.claim(INTAKES, pk, owner) is not None
            finally:
                connections.close_all()

        threads = [threading.Thread(target=take, args=(name,)) for name in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        winners = [owner for owner, got in won.items() if got]
        assert len(winners) == 1, won
        assert state(row).lease_owner == winners[0] and state(row).attempts == 1


def test_the_fence_renews_while_held_and_refuses_once_taken_over(row):
    held = leases.claim(INTAKES, row.pk, "a")
    expire(row)
    leases.fence(held, note="late but nobody took it")  # expired, not taken: the holder carries on
    assert state(row).lease_expires_at > timezone.now() and state(row).note == "late but nobody took it"
    expire(row)
    assert sweep() == {"retried": 1, "failed": 0}
    with pytest.raises(leases.LeaseLost):
        leases.fence(held, note="written after the lease was lost")
    fresh = leases.claim(INTAKES, row.pk, "b")
    with pytest.raises(leases.LeaseLost):
        leases.fence(held, note="written while b holds it")
    assert not leases.end(held, RunIntake.Status.IMPORTED)
    assert state(row).note == "late but nobody took it" and state(row).lease_owner == "b"
    assert leases.end(fresh, RunIntake.Status.IMPORTED, note="b's outcome")
    done = state(row)
    assert (done.status, done.note, done.lease_expires_at, done.attempts) == ("imported", "b's outcome", None, 2)


def test_renew_moves_the_expiry_on_by_one_lease(row):
    held = leases.claim(INTAKES, row.pk, "a")
    LENGTH["s"] = 3600.0
    assert leases.renew(held)
    assert state(row).lease_expires_at > timezone.now() + timedelta(seconds=3500)
    assert not leases.renew(leases.Lease(INTAKES, row.pk, "someone else"))


@pytest.mark.django_db(transaction=True)
def test_a_heartbeat_keeps_a_short_lease_past_its_length_and_dies_with_the_work(alice):
    """Work of 4 lease lengths with sweeps running all along: never taken while it beats; taken at
    the first sweep past one length once it stopped."""
    LENGTH["s"] = 0.6
    row = RunIntake.objects.create(owner=alice)
    held = leases.claim(INTAKES, row.pk, "a")
    deadline = time.monotonic() + 4 * LENGTH["s"]
    with leases.Heartbeat(held) as beat:
        while time.monotonic() < deadline:
            assert sweep() == {"retried": 0, "failed": 0}
            time.sleep(0.05)
    assert not beat.lost
    leases.fence(held)  # still the holder after 4 lease lengths
    stopped = time.monotonic()
    while sweep() == {"retried": 0, "failed": 0}:
        assert time.monotonic() - stopped < 5, "an unrenewed lease was never taken over"
        time.sleep(0.05)
    assert LENGTH["s"] <= time.monotonic() - stopped
    assert state(row).status == "received" and state(row).lease_owner == ""


@pytest.mark.django_db(transaction=True)
def test_a_heartbeat_whose_lease_was_taken_stops_and_says_so(alice):
    LENGTH["s"] = 0.3
    row = RunIntake.objects.create(owner=alice)
    held = leases.claim(INTAKES, row.pk, "a")
    with leases.Heartbeat(held) as beat:
        RunIntake.objects.filter(pk=row.pk).update(lease_owner="b")  # a sweeper and a new owner took it
        time.sleep(4 * LENGTH["s"])
    assert beat.lost and state(row).lease_owner == "b"


def test_release_hands_the_row_back_counting_the_attempt_or_not(row):
    held = leases.claim(INTAKES, row.pk, "a")
    assert leases.release(held, error="storage hiccup")
    back = state(row)
    assert (back.status, back.lease_owner, back.lease_expires_at, back.attempts) == ("received", "", None, 1)
    assert not leases.release(held)  # no longer held: nothing happens
    again = leases.claim(INTAKES, row.pk, "b")
    assert again.attempt == 2
    assert leases.release(again, uncount=True)  # the work never started: the attempt does not count
    assert state(row).attempts == 1


def test_the_sweep_retries_an_expired_lease_then_fails_it_after_max_attempts(row):
    moved = []
    for attempt in (1, 2, 3):
        held = leases.claim(INTAKES, row.pk, f"worker-{attempt}")
        assert held.attempt == attempt
        assert sweep(then=lambda r, gave_up: moved.append((r.pk, gave_up))) == {"retried": 0, "failed": 0}  # live
        expire(row)
        counts = sweep(then=lambda r, gave_up: moved.append((r.pk, gave_up)))
        assert sweep() == {"retried": 0, "failed": 0}  # a second sweeper finds nothing left to move
        if attempt < 3:
            assert counts == {"retried": 1, "failed": 0}
            assert state(row).status == "received" and state(row).error == f"attempt {attempt} lost; retrying"
    assert counts == {"retried": 0, "failed": 1}
    failed = state(row)
    assert (failed.status, failed.error, failed.attempts, failed.lease_expires_at) == (
        "failed", "lost 3 times; gave up", 3, None)
    assert moved == [(row.pk, False), (row.pk, False), (row.pk, True)]
    assert leases.claim(INTAKES, row.pk, "late") is None


def test_the_sweep_leaves_a_row_its_holder_renewed_after_it_was_read(row):
    held = leases.claim(INTAKES, row.pk, "a")
    expire(row)
    stale = leases.expired(INTAKES).get()
    leases.renew(held)  # between the sweeper's read and its write
    assert not leases.take_over(INTAKES, stale, timezone.now(), INTAKES.waiting)
    assert state(row).status == "importing" and state(row).lease_owner == "a"


def test_max_attempts_may_depend_on_the_row(row, alice):
    other = RunIntake.objects.create(owner=alice, metadata={"tries": 1})
    for r in (row, other):
        leases.claim(INTAKES, r.pk, "a")
        expire(r)
    counts = leases.sweep_expired(INTAKES, max_attempts=lambda r: r.metadata.get("tries", 5),
                                  retry=lambda r: {}, give_up=lambda r: {"error": "gave up"})
    assert counts == {"retried": 1, "failed": 1}
    assert (state(row).status, state(other).status) == ("received", "failed")


@pytest.mark.parametrize(("env", "expected"), [
    ({"MEDALBOARD_INTAKE_TIME_LIMIT_S": "7200", "CELERY_TASK_TIME_LIMIT": "7200"}, [60.0, 60.0, 60.0]),
    ({"MEDALBOARD_LEASE_S": "20", "MEDALBOARD_GRADING_LEASE_S": "5"}, [20.0, 5.0, 20.0]),
])
def test_leases_last_a_minute_whatever_the_time_limits_unless_configured(env, expected):
    from tests.site.test_settings import _manage

    unset = {name: "" for name in ("MEDALBOARD_LEASE_S", "MEDALBOARD_JOB_LEASE_S", "MEDALBOARD_GRADING_LEASE_S",
                                   "MEDALBOARD_INTAKE_LEASE_S")}
    result = _manage("shell", "--no-imports", "-c", "from django.conf import settings as s; "
                     "print(s.JOB_LEASE_S, s.GRADING_LEASE_S, s.INTAKE_LEASE_S)",
                     env={"DEBUG": "true", **unset, **env})
    assert [float(n) for n in result.stdout.splitlines()[-1].split()] == expected, result.stderr

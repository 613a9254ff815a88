"""Uploads are staged by the request and imported by a worker, so no file can hold a web process.

The form and the API call `receive`: it checks what is cheap (the daily grading quota), writes the
files to artifact storage under `intake/<token>/` and then creates a `RunIntake` row naming them (a
request killed before the row exists leaves files no row names, which the orphan sweep deletes after
its grace period), and hands the intake to Celery. The task `import_intake` claims it through the
lease machine (webapp.leases: received -> importing, an owner, a short lease renewed while it
imports, attempts + 1), runs `services.submit_run` on the staged files under the task's time limits
(the hostile-input bounds of services stay; its transaction is fenced, so a lost claim commits no
run), and records imported with the run, or failed with the reason; the staged files are deleted
once the outcome is recorded. `sweep_intakes` (called by the workers' sweep) re-queues
intakes nobody picked up and expired claims, and fails an intake after INTAKE_MAX_ATTEMPTS lost
claims. `wait` lets a request answer with the outcome when the worker was quick.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from collections.abc import Sequence
from datetime import timedelta

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import OperationalError
from django.db.models import Q
from django.utils import timezone

from leaderboard.models import Artifact, Competition, Run, RunIntake, Team
from leaderboard.runs import artifacts, quotas
from leaderboard.runs import submission as services
from leaderboard.runs.experiments import ExperimentSpec
from webapp import leases, queue

log = logging.getLogger(__name__)
FOLDER = "intake"
INTAKE_TASK = {"acks_late": True, "soft_time_limit": settings.INTAKE_TIME_LIMIT_S,
               "time_limit": settings.INTAKE_TIME_LIMIT_S + 30}
IMPORTS = leases.Leased(
    RunIntake, "import of intake", waiting=RunIntake.Status.RECEIVED, working=RunIntake.Status.IMPORTING,
    failed=RunIntake.Status.FAILED, lease_s=lambda: settings.INTAKE_LEASE_S,
)


# --- in the request -----------------------------------------------------------------------------


def receive(*, owner, metadata: dict, submission: File | None = None, trajectory_files: Sequence[File] = (),
            snapshot_files: Sequence[File] = ()) -> RunIntake:
    """Stage the files, record the intake and hand it to a worker (or import it here when
    INTAKE_IN_REQUEST). Raises QuotaExceeded before anything is stored (unless it repeats an upload
    already imported, which grades nothing new), StorageUnavailable if the storage refuses the files.
    `metadata` holds submit_run's keyword arguments (team as its id)."""
    files = [(Artifact.Kind.SUBMISSION, submission)] if submission is not None else []
    files += [(Artifact.Kind.TRAJECTORY, f) for f in trajectory_files]
    files += [(Artifact.Kind.SNAPSHOT, f) for f in snapshot_files]
    fingerprint = _fingerprint(metadata, files)
    if submission is not None and not RunIntake.objects.filter(
            owner=owner, fingerprint=fingerprint, status=RunIntake.Status.IMPORTED, run__isnull=False).exists():
        competition = Competition.objects.filter(slug=metadata.get("competition", "")).first()
        quotas.check_quota(user=owner, competition=competition)
    received = RunIntake(owner=owner, files=_stage(files), metadata=metadata, fingerprint=fingerprint)
    received.save()
    dispatch(received.pk)
    received.refresh_from_db()
    return received


def _fingerprint(metadata: dict, files: list[tuple[str, File]]) -> str:
    """Like the run's content hash, blind to what a repeat may change (notes, privacy: submission._repeat)."""
    key = {name: value for name, value in metadata.items() if name not in ("notes", "is_private")}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode())
    for kind, upload in files:
        content = hashlib.sha256()
        upload.seek(0)
        for chunk in upload.chunks():
            content.update(chunk)
        upload.seek(0)
        digest.update(f"\0{kind}\0{upload.name}\0{content.hexdigest()}".encode())
    return digest.hexdigest()


def _stage(files: list[tuple[str, File]]) -> list[dict]:
    folder, staged = f"{FOLDER}/{uuid.uuid4().hex}", []
    try:
        for number, (kind, upload) in enumerate(files):
            upload.seek(0)
            path = default_storage.save(f"{folder}/{number:04d}", upload)
            staged.append({"kind": kind, "name": upload.name or "", "path": path})
    except OSError as exc:
        delete_staged(staged)
        if exc.errno not in artifacts.STORAGE_ERRNOS:
            raise
        log.error("artifact storage refused a staged upload (%s); refused with a 503", exc)
        raise artifacts.StorageUnavailable("the artifact storage cannot be written to right now; "
                                          "nothing was saved, please try again later") from exc
    return staged


def dispatch(intake_id: int) -> None:
    """Hand the intake to a worker; if the broker is down, the sweep enqueues it later."""
    if settings.INTAKE_IN_REQUEST:
        import_intake.apply(args=(intake_id,))
        return
    now = timezone.now()
    if queue.publish(queue.IMPORT_INTAKE, [intake_id], what=f"intake {intake_id}") is None:
        return  # the intake stays received; the sweep enqueues it again
    RunIntake.objects.filter(pk=intake_id, enqueued_at__isnull=True).update(enqueued_at=now)


def wait(intake: RunIntake, seconds: float | None = None) -> RunIntake:
    """The intake once imported or failed, or as it stands after `seconds` (INTAKE_WAIT_S)."""
    deadline = time.monotonic() + (settings.INTAKE_WAIT_S if seconds is None else seconds)
    while not intake.done and time.monotonic() < deadline:
        time.sleep(0.1)
        intake.refresh_from_db()
    return intake


# --- in the worker ------------------------------------------------------------------------------


class _IntakeTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        """The hard time limit killed the import (the worker's main process calls this): fail it
        now with the reason rather than retrying it once the lease expires."""
        if isinstance(exc, TimeLimitExceeded) and args:
            intake = RunIntake.objects.filter(pk=args[0]).first()
            if intake is not None:
                _timed_out(intake, _owner(task_id), exc.args[0] if exc.args else self.time_limit)


def _owner(task_id: str | None) -> str:
    return f"intake-{task_id or uuid.uuid4().hex}"


@shared_task(name=queue.IMPORT_INTAKE, bind=True, base=_IntakeTask, **INTAKE_TASK)
def import_intake(self, intake_id: int) -> str:
    """Import one received intake; returns the status it ended in (or why nothing was done)."""
    owner = _owner(self.request.id)
    if not _claim(intake_id, owner):
        return "not received"
    intake = RunIntake.objects.select_related("owner").get(pk=intake_id)
    held = leases.Lease(IMPORTS, intake_id, owner)
    try:
        with leases.Heartbeat(held):
            run = _submit(intake, fence=lambda: leases.fence(held))
    except leases.LeaseLost:
        log.warning("intake %s: import dropped, the claim moved on", intake_id)
        return "claim lost"
    except OperationalError as exc:  # the database was briefly unavailable: the sweep tries again, boundedly
        if intake.attempts >= settings.INTAKE_MAX_ATTEMPTS:
            return _finish(intake, owner, failure=RunIntake.Failure.INTERNAL,
                           error=f"could not import the upload: the database failed {intake.attempts} times ({exc})")
        log.warning("intake %s: %s; handed back", intake_id, exc)
        leases.release(held, enqueued_at=None, updated_at=timezone.now())
        return RunIntake.Status.RECEIVED
    except artifacts.UploadError as exc:
        if not isinstance(exc.__cause__, SoftTimeLimitExceeded):  # services wraps what an importer raised
            return _finish(intake, owner, failure=RunIntake.Failure.INVALID, error=str(exc))
        return _timed_out(intake, owner, _soft_limit(self))
    except quotas.QuotaExceeded as exc:
        return _finish(intake, owner, failure=RunIntake.Failure.QUOTA, error=str(exc))
    except artifacts.StorageUnavailable as exc:
        return _finish(intake, owner, failure=RunIntake.Failure.STORAGE, error=str(exc))
    except SoftTimeLimitExceeded:
        return _timed_out(intake, owner, _soft_limit(self))
    except Exception as exc:  # noqa: BLE001 - an importer bug: record why, never retry
        log.exception("importing intake %s failed", intake_id)
        return _finish(intake, owner, failure=RunIntake.Failure.INTERNAL,
                       error=f"could not import the upload ({exc.__class__.__name__}: {exc})")
    return _finish(intake, owner, run=run)


def _soft_limit(task) -> float:
    """The limit this run of the task had: the message's (its publisher's settings), else the task's."""
    return (task.request.timelimit or (None, None))[1] or task.soft_time_limit


def _timed_out(intake: RunIntake, owner: str, seconds: float) -> str:
    return _finish(intake, owner, failure=RunIntake.Failure.TIMEOUT,
                   error=f"importing took longer than its {seconds:g} s time limit")


def _claim(intake_id: int, owner: str) -> bool:
    return leases.claim(IMPORTS, intake_id, owner, updated_at=timezone.now()) is not None


def _submit(intake: RunIntake, fence) -> Run:
    """submit_run on the staged files; `fence` runs in the transaction that creates the run, so a
    claim lost meanwhile commits nothing (a fenced write raises LeaseLost)."""
    spec, meta = ExperimentSpec.split(intake.metadata)
    team_id = meta.pop("team", None)
    files = {kind: [File(default_storage.open(f["path"], "rb"), name=f["name"])
                    for f in intake.files if f["kind"] == kind]
             for kind in (Artifact.Kind.SUBMISSION, Artifact.Kind.TRAJECTORY, Artifact.Kind.SNAPSHOT)}
    try:
        return services.submit_run(
            owner=intake.owner, origin=Run.Origin.UPLOAD, team=Team.objects.filter(pk=team_id).first(),
            submission=next(iter(files[Artifact.Kind.SUBMISSION]), None),
            trajectory_files=files[Artifact.Kind.TRAJECTORY], snapshot_files=files[Artifact.Kind.SNAPSHOT],
            experiment=spec, fence=fence, **meta,
        )
    finally:
        for opened in files.values():
            for f in opened:
                f.close()


def _finish(intake: RunIntake, owner: str, *, run: Run | None = None, failure: str = "", error: str = "") -> str:
    """Record the outcome while the claim holds, then drop the staged files (a lost claim's are the
    new holder's). An identical earlier upload's run comes back from submit_run: its note says so."""
    status = RunIntake.Status.IMPORTED if run is not None else RunIntake.Status.FAILED
    if not leases.end(leases.Lease(IMPORTS, intake.pk, owner), status, run=run, failure=failure,
                      error=error[:5000], note=getattr(run, "repeat_note", "")[:300], updated_at=timezone.now()):
        log.warning("intake %s: outcome dropped, the claim moved on", intake.pk)
        return "claim lost"
    delete_staged(intake.files)
    return status


def delete_staged(files: list[dict]) -> None:
    for f in files:
        default_storage.delete(f["path"])


def staged_names() -> set[str]:
    """Storage names of staged files that an intake still needs (the orphan sweep keeps them)."""
    names: set[str] = set()
    for files in RunIntake.objects.exclude(status__in=(RunIntake.Status.IMPORTED, RunIntake.Status.FAILED)) \
            .values_list("files", flat=True):
        names.update(f["path"] for f in files)
    return names


# --- the sweep ----------------------------------------------------------------------------------


def sweep_intakes() -> dict[str, int]:
    """Expired claims go back to received (or fail after INTAKE_MAX_ATTEMPTS); received intakes that
    waited STALE_PENDING_S unpublished, or published but untouched, are enqueued again."""
    now = timezone.now()
    expired = leases.sweep_expired(
        IMPORTS, max_attempts=settings.INTAKE_MAX_ATTEMPTS,
        retry=lambda intake: {"enqueued_at": None, "updated_at": now, "error": (
            f"import attempt {intake.attempts} was interrupted (the worker importing it was lost); retrying")},
        give_up=lambda intake: {"failure": RunIntake.Failure.INTERRUPTED, "updated_at": now, "error": (
            f"importing was interrupted {intake.attempts} times (the worker importing it was lost); gave up")},
        then=_drop_staged_of_failed,
    )
    counts = {"intakes_retried": expired["retried"], "intakes_failed": expired["failed"]}
    counts["intakes_requeued"] = _requeue_stale(now)
    return counts


def _drop_staged_of_failed(intake: RunIntake, gave_up: bool) -> None:
    if gave_up:  # once failed, nothing will read them again
        delete_staged(intake.files)


def _requeue_stale(now) -> int:
    cutoff = now - timedelta(seconds=settings.STALE_PENDING_S)
    stale = RunIntake.objects.filter(status=RunIntake.Status.RECEIVED).filter(
        Q(enqueued_at__isnull=True, updated_at__lt=cutoff) | Q(enqueued_at__isnull=True, attempts__gt=0)
        | Q(enqueued_at__lt=cutoff))
    requeued = 0
    for intake_id, enqueued_at in stale.values_list("pk", "enqueued_at"):
        # Move enqueued_at first: of several sweepers, only the one whose UPDATE matched publishes.
        if RunIntake.objects.filter(pk=intake_id, status=RunIntake.Status.RECEIVED,
                                    enqueued_at=enqueued_at).update(enqueued_at=now) != 1:
            continue
        try:
            queue.send(queue.IMPORT_INTAKE, [intake_id])
        except Exception as exc:  # noqa: BLE001 - the broker is still down: next sweep
            log.warning("sweep: could not enqueue intake %s: %s", intake_id, exc)
            RunIntake.objects.filter(pk=intake_id, enqueued_at=now).update(enqueued_at=enqueued_at)
            continue
        requeued += 1
    return requeued

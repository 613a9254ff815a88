"""The site's side of a remote runner's writes into its task: every one scoped to the runner's own
task (Forbidden otherwise), fenced by the lease it names (LeaseLost once the task was handed on),
and idempotent (steps by line number, uploads by byte offset, snapshots and artifacts by upload,
the finish by its stored answer)."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from leaderboard.models import Run
from leaderboard.runs import job_runs
from runner.api_v1 import llm, research
from runner.gateway import STEPS_FILE
from runner.host.outputs import Limits, Stored
from runner.jobs import attempts, recipes, task_leases
from runner.models import Job, JobTask, RemoteAttempt, RemoteUpload, Runner

AGENT, GATEWAY = "agent", "gateway"
# What a runner may upload: the kinds of a run's own files (runner.host.outputs) and snapshots; never a
# grading report or a trajectory of the site's making.
UPLOAD_KINDS = ("submission", "log", "code", "other", "snapshot")


class Forbidden(Exception):
    """Not this runner's task."""


class Refused(Exception):
    """A write the site will not take as sent (too large, out of order, a bad hash); says why."""

    def __init__(self, message: str, status: int = 400, **extra) -> None:
        super().__init__(message)
        self.status, self.extra = status, extra


def held_by(runner: Runner, task_id: int, lease: dict) -> task_leases.Claim:
    """The runner's lease on its task, as named in the request; Forbidden for another runner's task.
    Whether the lease still holds is the fence's to say, inside each write's transaction."""
    task = JobTask.objects.filter(pk=task_id).values("runner_id", "attempts").first()
    if task is None or task["runner_id"] != runner.pk:
        raise Forbidden(f"task {task_id} is not held by runner {runner.name}")
    try:
        return task_leases.Claim(task_leases.JOB_TASKS, task_id, str(lease["owner"]), int(lease["attempt"]))
    except (KeyError, TypeError, ValueError):
        raise Refused("lease: {owner, attempt} expected") from None


def staging(held: task_leases.Claim) -> Path:
    return Path(settings.RUNNER_UPLOAD_DIR) / f"task-{held.pk}-a{held.attempt}-{held.owner[:16]}"


# --- lease, start ---------------------------------------------------------------------------------


def renew(held: task_leases.Claim, log_tail: str | None) -> dict:
    """Renew the lease (and keep the output's tail); says whether the job was cancelled meanwhile."""
    changes = {"log_tail": log_tail[-16_384:]} if log_tail is not None else {}
    with transaction.atomic():
        task_leases.fence(held, **changes)
    Runner.objects.filter(tasks__pk=held.pk).update(last_heartbeat=timezone.now())
    return {"cancel": Job.objects.filter(tasks__pk=held.pk, cancel_requested=True).exists()}


def started(held: task_leases.Claim, recipe: dict) -> dict:
    """The agent's start: the run's clock, set once per attempt (a retry keeps the first), and its
    recipe: the site's record (runner.jobs.recipes), with the runner's word on its sandbox."""
    from runner.jobs.services import agent_image

    task = JobTask.objects.select_related("run", "job__agent", "competition", "runner").get(pk=held.pk)
    started_at = task.agent_started_at or timezone.now()
    if task.agent_started_at is None:
        reported = (recipe.get("sandbox") if isinstance(recipe, dict) else None) or {}
        image = reported.get("image") if isinstance(reported, dict) else None
        recipe = recipes.from_remote(task, "" if image else task.job.agent_image or agent_image(task.job.agent), recipe)
    with transaction.atomic():
        if task.agent_started_at is None:
            task_leases.fence(held, agent_started_at=started_at)
            job_runs.record_recipe(_run_of(task), recipe)
        else:
            task_leases.fence(held)
    return {"agent_started_at": started_at.isoformat()}


def _run_of(task: JobTask) -> Run:
    if task.run is None:  # the claim creates it: a task without one was never claimed through the API
        raise Refused(f"task {task.pk} has no run", 409)
    return task.run


# --- steps ----------------------------------------------------------------------------------------

_live: dict[tuple[int, int, str], job_runs.LiveSteps] = {}
_live_lock = threading.Lock()


def steps(held: task_leases.Claim, agent: list, gateway: list) -> dict:
    """Append the lines past those already received, per stream, to the staged copy and to the
    run's live trajectory; lines sent again are skipped."""
    with transaction.atomic():
        task_leases.fence(held)
        state = RemoteAttempt.objects.select_for_update().get(task_id=held.pk, attempt=held.attempt)
        fresh = {AGENT: _fresh(agent, state.agent_lines), GATEWAY: _fresh(gateway, state.gateway_lines)}
        live = _live_steps(held)  # before the new lines are staged: a rebuilt one holds those before them
        for stream, lines in fresh.items():
            _stage_lines(held, stream, lines)
        state.agent_lines = max([state.agent_lines, *(n for n, _ in fresh[AGENT])])
        state.gateway_lines = max([state.gateway_lines, *(n for n, _ in fresh[GATEWAY])])
        state.save(update_fields=["agent_lines", "gateway_lines"])
        added = live.append(fresh[AGENT], lambda: None, fresh[GATEWAY])
    return {"agent_lines": state.agent_lines, "gateway_lines": state.gateway_lines, "added": added}


def _fresh(lines: list, seen: int) -> list[tuple[int, bytes]]:
    try:
        numbered = sorted((int(n), str(text).encode()) for n, text in lines)
    except (TypeError, ValueError):
        raise Refused("lines: [[line number, text], ...] expected") from None
    return [(n, text) for n, text in numbered if n > seen]


def _stage_lines(held: task_leases.Claim, stream: str, lines: list[tuple[int, bytes]]) -> None:
    if not lines:
        return
    folder = staging(held)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{stream}-lines.jsonl", "a") as f:
        for n, text in lines:
            f.write(json.dumps({"n": n, "l": text.decode()}) + "\n")


def _live_steps(held: task_leases.Claim) -> job_runs.LiveSteps:
    """This process's live trajectory of the attempt; after a restart (or in another process) it is
    written again from the staged lines, so it never misses any."""
    key = (held.pk, held.attempt, held.owner)
    with _live_lock:
        if key not in _live:
            run = Run.objects.get(job_task__pk=held.pk)
            live = job_runs.LiveSteps(run)
            live.append(_staged_lines(held, AGENT), lambda: None, _staged_lines(held, GATEWAY))
            _live[key] = live
        return _live[key]


def _staged_lines(held: task_leases.Claim, stream: str) -> list[tuple[int, bytes]]:
    path = staging(held) / f"{stream}-lines.jsonl"
    if not path.is_file():
        return []
    return [(item["n"], item["l"].encode()) for item in map(json.loads, path.read_text().splitlines())]


def _close_live(held: task_leases.Claim) -> None:
    with _live_lock:
        live = _live.pop((held.pk, held.attempt, held.owner), None)
    if live is not None:
        live.close()


# --- uploads --------------------------------------------------------------------------------------


def upload_state(held: task_leases.Claim, key: str) -> dict:
    upload = RemoteUpload.objects.filter(task_id=held.pk, attempt=held.attempt, key=key).first()
    if upload is None:
        return {"received": 0, "complete": False}
    return {"received": upload.received, "complete": upload.complete}


def upload_chunk(
    held: task_leases.Claim, key: str, *, name: str, kind: str, size: int, sha256: str, offset: int, body
) -> dict:
    """Append the chunk at `offset` of the file `key` (announced as `size` bytes with `sha256`);
    bytes already received are skipped, a gap is refused with what the site has. The last byte in
    checks the hash: a mismatch drops the file, to be sent again."""
    limits = Limits.from_settings()
    if kind not in UPLOAD_KINDS:
        raise Refused(f"Upload-Kind: one of {', '.join(UPLOAD_KINDS)}")
    if size > limits.file_bytes:
        raise Refused(f"{name}: {size:,} bytes, over the {limits.file_bytes:,}-byte limit per file", 413)
    with transaction.atomic():
        task_leases.fence(held)
        upload, created = RemoteUpload.objects.select_for_update().get_or_create(
            task_id=held.pk,
            attempt=held.attempt,
            key=key,
            defaults={"name": name[:1000], "kind": kind[:20], "size": size, "sha256": sha256},
        )
        if created and _attempt_bytes(held) > limits.total_bytes:
            raise Refused(f"the run's uploads would pass its {limits.total_bytes:,}-byte output limit", 413)
        if (upload.size, upload.sha256) != (size, sha256):
            raise Refused(f"upload {key} was announced with another size or hash", 409)
        if upload.complete:
            return {"received": upload.received, "complete": True}
        if offset > upload.received:
            raise Refused(f"upload {key}: a gap, the site has {upload.received} bytes", 409, received=upload.received)
        _append(held, upload, offset, body)
        matches = upload.received < upload.size or _check_hash(held, upload)
        upload.save(update_fields=["received", "complete"])
    if not matches:  # after the commit: the site's copy is dropped for good
        raise Refused(f"upload {key}: its content does not match its sha256; send it again", 409, received=0)
    return {"received": upload.received, "complete": upload.complete}


def _attempt_bytes(held: task_leases.Claim) -> int:
    return sum(RemoteUpload.objects.filter(task_id=held.pk, attempt=held.attempt).values_list("size", flat=True))


def _append(held: task_leases.Claim, upload: RemoteUpload, offset: int, body) -> None:
    path = _staged_file(held, upload)
    path.parent.mkdir(parents=True, exist_ok=True)
    skip = upload.received - offset  # bytes of this chunk the site already has
    most = min(settings.RUNNER_UPLOAD_CHUNK_BYTES, upload.size - upload.received)
    with open(path, "ab") as out:
        out.truncate(upload.received)  # a previous append that did not commit
        while True:
            block = body.read(min(1 << 20, most + max(skip, 0) + 1))
            if not block:
                break
            if skip > 0:
                block, skip = block[skip:], max(skip - len(block), 0)
            if len(block) > most:
                raise Refused(
                    f"upload {upload.key}: more bytes than announced, or a chunk over "
                    f"{settings.RUNNER_UPLOAD_CHUNK_BYTES:,} bytes",
                    413,
                )
            out.write(block)
            upload.received += len(block)
            most -= len(block)


def _check_hash(held: task_leases.Claim, upload: RemoteUpload) -> bool:
    """Whether the whole file matches its hash: if so it is complete, if not it is dropped."""
    path = _staged_file(held, upload)
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != upload.sha256:
        path.unlink()
        upload.received = 0
        return False
    upload.complete = True
    return True


def _staged_file(held: task_leases.Claim, upload: RemoteUpload) -> Path:
    return staging(held) / "files" / f"{upload.pk:08d}"


def _complete(held: task_leases.Claim, key: str) -> RemoteUpload:
    upload = RemoteUpload.objects.select_for_update().filter(task_id=held.pk, attempt=held.attempt, key=key).first()
    if upload is None or not upload.complete:
        raise Refused(f"upload {key} is not complete", 409)
    return upload


# --- snapshots and the end ------------------------------------------------------------------------


def snapshot(held: task_leases.Claim, key: str, seconds: float) -> dict:
    """The uploaded file `key` as a snapshot at `seconds` into the run, once."""
    run = Run.objects.get(job_task__pk=held.pk)
    with transaction.atomic():
        task_leases.fence(held)
        upload = _complete(held, key)
        if upload.used:
            return {"kept": True}
        try:
            with transaction.atomic(), open(_staged_file(held, upload), "rb") as f:
                job_runs.add_snapshot(run, seconds, File(f, name="submission.csv"))
        except job_runs.SnapshotError as exc:
            return {"kept": False, "why": str(exc)}
        upload.used = True
        upload.save(update_fields=["used"])
    return {"kept": True}


def finish(held: task_leases.Claim, report: dict) -> dict:
    """Store the uploaded outputs as the run's artifacts, its final trajectory, queue its grading on
    the site (unless cancelled or not the agent's own end) and end the task. Sent again, it answers
    as it did the first time."""
    state = RemoteAttempt.objects.get(task_id=held.pk, attempt=held.attempt)
    if state.finished is not None:
        return state.finished
    task = JobTask.objects.select_related("run", "job").get(pk=held.pk)
    status = report.get("status")
    if status not in JobTask.FINISHED:
        raise Refused(f"status: one of {', '.join(JobTask.FINISHED)}")
    _close_live(held)
    metered = llm.metered(task.job, report.get("llm"))  # the gateway's meter, read as untrusted
    with transaction.atomic():
        task_leases.fence(held, status=JobTask.Status.GRADING, error=metered.error(str(report.get("error", "")))[:5000])
        run = _run_of(task)
        stored = _store(held, run, report)
        llm_notes = llm.settle(run, task.job, report.get("llm"), metered)
        notes = [str(note) for note in report.get("notes", [])] + stored.notes + llm_notes
        attempts.record_end(run, task, stored, notes, _gateway_lines(held))
        _end_run(run, status, report, stored)
        task_leases.finish(held, status)
        answer = {"status": status, "run": run.pk}
        RemoteAttempt.objects.filter(pk=state.pk).update(finished=answer)
    transaction.on_commit(lambda: shutil.rmtree(staging(held), ignore_errors=True))
    return answer


def _store(held: task_leases.Claim, run: Run, report: dict) -> Stored:
    stored = Stored(
        submission_problem=str(report.get("submission_problem", "")), trajectory_cut=bool(report.get("trajectory_cut"))
    )
    for key in report.get("files", []):
        upload = _complete(held, str(key))
        if upload.used or upload.kind == "snapshot":
            continue
        path = _staged_file(held, upload)
        try:
            with open(path, "rb") as f:
                job_runs.store_file(run, upload.kind, upload.name, File(f, name=Path(upload.name).name))
        except job_runs.FileRefused as exc:
            stored.notes.append(f"{upload.name}: not stored, {exc}")
            continue
        upload.used = True
        upload.save(update_fields=["used"])
        stored.has_submission |= upload.name == "submission/submission.csv"
        if upload.name == report.get("trajectory_from") and not stored.trajectory_cut:
            stored.trajectory = path
    return stored


def _gateway_lines(held: task_leases.Claim) -> Path | None:
    lines = _staged_lines(held, GATEWAY)
    if not lines:
        return None
    path = staging(held) / STEPS_FILE
    path.write_bytes(b"".join(text + b"\n" for _, text in lines))
    return path


def _end_run(run: Run, status: str, report: dict, stored: Stored) -> None:
    if status == JobTask.Status.CANCELLED:
        job_runs.fail_job_run(run.pk, "cancelled by its job", while_in=None)
    elif not report.get("counted", True):
        job_runs.fail_job_run(run.pk, str(report.get("error", "")), while_in=None)
    elif research.is_research_run(run):  # its eval.py scores it on the site's research grading side
        research.await_scoring(run, status, report)
    elif stored.submission_problem:  # not a regular file, or too large: invalid, with the reason
        job_runs.record_invalid_submission(run, stored.submission_problem)
    else:
        job_runs.grade_on_site(run)
